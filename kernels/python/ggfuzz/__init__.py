"""ggfuzz for Python kernels: a plugin file (`ggfuzz --plugin my_kernels.py ...`) describes each
kernel as a ggfuzz.Kernel and calls ggfuzz.register() at import; ggfuzz then runs it like any
other kernel, with every oracle. `python -m ggfuzz ARGS...` is the ggfuzz command line with
Python kernels (the ggfuzz executable starts it by itself when a plugin is a .py file).

Kernel and register need nothing but the standard library; the views, the bf16 helpers and
ggfuzz.cases (a case's tensors and the oracles' per-element check, for a test of your own) need
NumPy, imported when first used, so that `python -m ggfuzz` can say so cleanly. ggfuzz.fuzz (a
short campaign a test runs, failing with the bugs found) and ggfuzz.testing run a kernel in
child processes; ggfuzz.pytest_plugin gives pytest one test per case file."""

from .kernel import Kernel, register  # noqa: F401 (the package's API)

_LAZY = {"ProblemView": "views", "OperandsView": "views", "bf16_to_f32": "formats",
         "f32_to_bf16": "formats", "fuzz": "testing", "FuzzFailure": "testing",
         "HarnessError": "testing"}


def __getattr__(name):
    import importlib
    if name in _LAZY:
        return getattr(importlib.import_module("." + _LAZY[name], __name__), name)
    if name in ("cases", "testing"):  # replay a case at the desk (NumPy, torch); tests
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'ggfuzz' has no attribute %r" % name)


__all__ = ["Kernel", "register"] + sorted(_LAZY)
