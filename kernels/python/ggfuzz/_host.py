"""The Python host's side of libggfuzz.so: the plugin loader the C plugin loader calls for a
".py" path (it imports the file and adds each kernel it registered through the gg_plugin_host
it was given), the C descriptor built for each ggfuzz.Kernel, and the callbacks that call the
kernel's Python code. No exception leaves a callback: one in run() or workspace_bytes() is the
kernel's failure (status GG_E_INVAL, as a C kernel's failed run()) and one in supports() a
refusal, each with the last line of its traceback and where it was raised as the message. Every
descriptor, callback and string stays referenced here until the process exits."""

import ctypes as C
import importlib.util
import os
import re
import sys
import traceback

from . import _abi, kernel, views

# realpath of each plugin imported -> its descriptors (kept alive: the registry points at them).
_loaded = {}


def error_text(exc):
    """The last line of exc's traceback and the innermost place it was raised."""
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    tb = exc.__traceback__
    if tb is None:
        return last
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return "%s (%s:%d in %s)" % (last, os.path.basename(code.co_filename), tb.tb_lineno,
                                 code.co_name)


def write_message(buf, length, text):
    """Writes text, NUL-terminated and cut to length bytes, into a C buffer (None: nowhere)."""
    if not buf or not length:
        return
    data = text.encode("utf-8", "replace")[: max(int(length) - 1, 0)] + b"\0"
    C.memmove(buf, data, len(data))


class _Descriptor:
    """The struct gg_kernel of one ggfuzz.Kernel, with the callbacks behind its slots."""

    def __init__(self, k):
        self.kernel = k
        self.device = k.backend != "cpu"
        self.pending_error = None  # an exception of workspace_bytes(), reported by run()
        self.name = k.name.encode()
        self.summary = k.summary.encode() if k.summary else None
        self.mutant_names = [m.encode() for m in k.mutants]
        self.mutants = None
        if self.mutant_names:
            self.mutants = (C.c_char_p * (len(self.mutant_names) + 1))(*self.mutant_names, None)
        self.c_supports = _abi.SUPPORTS_FN(self._supports)
        self.c_run = _abi.RUN_FN(self._run)
        self.c_workspace = (_abi.WORKSPACE_FN(self._workspace) if k.workspace_bytes
                            else _abi.WORKSPACE_FN())
        ops = 0
        for op in k.ops:
            ops |= 1 << _abi.OPS.index(op)
        self.struct = _abi.Kernel(
            abi_version=_abi.ABI_VERSION, name=self.name, summary=self.summary,
            backend=_abi.BACKENDS.index(k.backend), ops=ops,
            tile_m=k.tile[0], tile_n=k.tile[1], tile_k=k.tile[2],
            mutants=C.cast(self.mutants, C.POINTER(C.c_char_p)) if self.mutants else None,
            supports=self.c_supports, workspace_bytes=self.c_workspace, run=self.c_run)

    def _supports(self, pp, why, why_len):
        try:
            if self.kernel.supports is None:
                return 1
            r = self.kernel.supports(views.ProblemView(pp))
            if r is None or r is True:
                return 1
            if isinstance(r, str):
                write_message(why, why_len, r or "not supported")
                return 0
            if r:
                return 1
            write_message(why, why_len, "not supported")
            return 0
        except BaseException as e:
            write_message(why, why_len, "supports() raised " + error_text(e))
            return 0

    def _workspace(self, pp):
        try:
            self.pending_error = None
            n = int(self.kernel.workspace_bytes(views.ProblemView(pp)))
            if n < 0:
                raise ValueError("workspace_bytes() returned %d" % n)
            return n
        except BaseException as e:
            self.pending_error = "workspace_bytes() raised " + error_text(e)
            return 0

    def _run(self, pp, po, err, err_len):
        try:
            if self.pending_error is not None:
                write_message(err, err_len, self.pending_error)
                return _abi.E_INVAL
            p = views.ProblemView(pp)
            o = views.OperandsView(p, po, self.device)
            if not self.device:
                self.kernel.run(p, o)
                return _abi.OK
            import torch
            s = po.contents.stream
            o.stream = (torch.cuda.ExternalStream(s) if s
                        else torch.cuda.default_stream())
            with torch.cuda.stream(o.stream):
                self.kernel.run(p, o)
            return _abi.OK
        except BaseException as e:
            write_message(err, err_len, error_text(e))
            return _abi.E_INVAL


def _module_name(path):
    """A module name for the plugin file that no imported module has."""
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name, i = "ggfuzz_plugin_" + stem, 1
    while name in sys.modules:
        i += 1
        name = "ggfuzz_plugin_%s_%d" % (stem, i)
    return name


def _import(path):
    """Imports the plugin file (its directory first on sys.path, as for a script) and returns
    the descriptors of the kernels it registered."""
    del kernel._pending[:]
    d = os.path.dirname(os.path.abspath(path))
    if d not in sys.path:
        sys.path.insert(0, d)
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        del kernel._pending[:]
        raise
    descs = [_Descriptor(k) for k in kernel._pending]
    del kernel._pending[:]
    return descs


def _load(c_path, c_host, err, err_len):
    """The gg_cli_plugin_loader_fn: imports the plugin once and adds its kernels."""
    try:
        path = os.fsdecode(c_path)
        if not os.path.isfile(path):
            write_message(err, err_len, "no such file")
            return _abi.E_IO
        key = os.path.realpath(path)
        if key not in _loaded:
            _loaded[key] = _import(path)
        host = c_host.contents
        msg = C.create_string_buffer(512)
        for d in _loaded[key]:
            st = host.add_kernel(host.ctx, C.byref(d.struct), msg, len(msg))
            if st != _abi.OK:
                write_message(err, err_len, msg.value.decode("utf-8", "replace"))
                return st
        return _abi.OK
    except BaseException as e:
        write_message(err, err_len, error_text(e))
        return _abi.E_INVAL


loader = _abi.LOADER_FN(_load)
