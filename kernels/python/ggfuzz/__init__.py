"""ggfuzz for Python kernels: a plugin file (`ggfuzz --plugin my_kernels.py ...`) describes each
kernel as a ggfuzz.Kernel and calls ggfuzz.register() at import; ggfuzz then runs it like any
other kernel, with every oracle. `python -m ggfuzz ARGS...` is the ggfuzz command line with
Python kernels (the ggfuzz executable starts it by itself when a plugin is a .py file).

Kernel and register need nothing but the standard library; the views, the bf16 helpers and
ggfuzz.cases (a case's tensors and the oracles' per-element check, for a test of your own) need
NumPy, imported when first used, so that `python -m ggfuzz` can say so cleanly."""

from .kernel import Kernel, register

_LAZY = {"ProblemView": "views", "OperandsView": "views", "bf16_to_f32": "formats",
         "f32_to_bf16": "formats"}


def __getattr__(name):
    import importlib
    if name in _LAZY:
        return getattr(importlib.import_module("." + _LAZY[name], __name__), name)
    if name == "cases":  # ggfuzz.cases: replay a case at the desk (NumPy, torch)
        return importlib.import_module(".cases", __name__)
    raise AttributeError("module 'ggfuzz' has no attribute %r" % name)


__all__ = ["Kernel", "register"] + sorted(_LAZY)
