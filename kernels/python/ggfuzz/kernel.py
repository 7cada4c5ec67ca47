"""The author's side of a Python kernel: ggfuzz.Kernel describes one (its name, ops, backend and
the callables supports, run and workspace_bytes), and ggfuzz.register() hands it to ggfuzz. A
plugin file calls register() for each of its kernels when it is imported; kernels registered
outside a plugin's import are not seen by ggfuzz. A test that imports the plugin file gets the
kernels it registered (each knows its plugin file: k.path), which ggfuzz.fuzz and the pytest
plugin run through `ggfuzz --plugin k.path`."""

import os
import sys

from . import _abi

# Kernels registered since the loader began importing a plugin (the loader takes them).
_pending = []
# Every kernel registered in this process, by name (the last registration of a name wins).
registered = {}


class Kernel:
    """A kernel under test, as a struct gg_kernel describes one (kernels/gg_kernel.h).

    name      <family>_<types>_<backend>_<variant>, unique among the kernels
    ops       op names: grouped_fwd, grouped_dgrad, grouped_wgrad, batched, dense, moe_sorted
    run       run(p, o): computes the problem p (a ggfuzz.ProblemView) into o.c (a
              ggfuzz.OperandsView); returns nothing. An exception is the kernel's failure.
    supports  supports(p) -> None or True when the kernel computes p correctly; a string (the
              reason) or False when it does not. (Default: every problem of its ops.)
    backend   "cpu" (NumPy views of host memory) or "cuda"/"hip" (torch tensors on the device)
    summary   one line for `ggfuzz list`
    mutants   names of planted bugs the kernel can run with (p.has_mutant(name) tells)
    workspace_bytes  workspace_bytes(p) -> int, the bytes of o.workspace (default 0)
    tile      (tile_m, tile_n, tile_k), for the generator's tile residues; 0 when not tiled
    path      set by register(): the file that registered it (its plugin file), absolute
    """

    def __init__(self, name, ops, run, supports=None, backend="cpu", summary=None, mutants=(),
                 workspace_bytes=None, tile=(0, 0, 0)):
        if not isinstance(name, str) or not name:
            raise ValueError("Kernel: name must be a non-empty string")
        if isinstance(ops, str):
            ops = (ops,)
        for op in ops:
            if op not in _abi.OPS:
                raise ValueError("Kernel %s: unknown op %r (one of %s)"
                                 % (name, op, ", ".join(_abi.OPS)))
        if backend not in _abi.BACKENDS:
            raise ValueError("Kernel %s: backend %r is not one of %s"
                             % (name, backend, ", ".join(_abi.BACKENDS)))
        if not callable(run):
            raise ValueError("Kernel %s: run must be callable" % name)
        for m in mutants:
            if not isinstance(m, str) or not m or "," in m:
                raise ValueError("Kernel %s: mutant %r must be a non-empty name without ','"
                                 % (name, m))
        if len(tuple(tile)) != 3:
            raise ValueError("Kernel %s: tile must be (tile_m, tile_n, tile_k)" % name)
        self.name = name
        self.ops = tuple(ops)
        self.run = run
        self.supports = supports
        self.backend = backend
        self.summary = summary
        self.mutants = tuple(mutants)
        self.workspace_bytes = workspace_bytes
        self.tile = tuple(int(t) for t in tile)
        self.path = None

    def __repr__(self):
        return "ggfuzz.Kernel(%r, ops=%r, backend=%r)" % (self.name, self.ops, self.backend)


def register(*kernels):
    """Registers kernels (ggfuzz.Kernel objects) with ggfuzz; a plugin file calls it at import.
    Returns the last one, so that it also serves as `k = register(Kernel(...))`."""
    caller = sys._getframe(1).f_globals.get("__file__")
    for k in kernels:
        if not isinstance(k, Kernel):
            raise TypeError("ggfuzz.register takes ggfuzz.Kernel objects, not %r" % (k,))
        if k.path is None and caller:
            k.path = os.path.abspath(caller)
        _pending.append(k)
        registered[k.name] = k
    return kernels[-1] if kernels else None
