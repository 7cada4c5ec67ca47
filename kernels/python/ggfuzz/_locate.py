"""Where the Python side finds libggfuzz.so, and through it the rest of its ggfuzz.

The library: GGFUZZ_LIB; else the one an installed package records beside itself (_installed.py,
written by `cmake --install`: PREFIX/lib/libggfuzz.so seen from PREFIX/share/ggfuzz/python);
else that of the `ggfuzz` executable on PATH (beside it in a build tree, PREFIX/lib when
installed). The library then knows its own corpus, Python package and executable (gg_cli_home():
an installed one under its prefix, a build tree's in its source tree). Standard library only:
`python -m ggfuzz` uses it before it knows that NumPy imports."""

import ctypes
import os
import shutil

_loaded = {}


def library():
    """The absolute path of the libggfuzz.so to use; FileNotFoundError naming what was tried."""
    env = os.environ.get("GGFUZZ_LIB")
    if env:
        return os.path.abspath(env)
    tried = []
    try:
        from . import _installed
        tried.append(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   _installed.LIBRARY)))
    except ImportError:
        pass
    exe = shutil.which("ggfuzz")
    if exe:
        d = os.path.dirname(os.path.realpath(exe))
        tried += [os.path.join(d, "libggfuzz.so")] + [
            os.path.normpath(os.path.join(d, "..", lib, "libggfuzz.so"))
            for lib in ("lib", "lib64")]
    for path in tried:
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        "libggfuzz.so not found (%s): set GGFUZZ_LIB to ggfuzz's libggfuzz.so (PREFIX/lib of an "
        "installed ggfuzz, beside ggfuzz in a build tree), or put that ggfuzz on PATH"
        % ("tried " + ", ".join(tried) if tried else
           "GGFUZZ_LIB is not set, this package is not an installed one and no ggfuzz is on PATH"))


def load(path=None):
    """The library at path (default: library()) as a ctypes.CDLL, loaded once per path."""
    path = os.path.abspath(path or library())
    if path not in _loaded:
        lib = ctypes.CDLL(path)
        lib.gg_cli_home.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.gg_cli_home.restype = ctypes.c_int
        _loaded[path] = lib
    return _loaded[path]


def home(what, lib=None):
    """What the library finds of its ggfuzz (gg_cli_home): "corpus", "python", "lib" or "exe";
    FileNotFoundError naming the paths tried when none exists."""
    buf = ctypes.create_string_buffer(8192)
    rc = load(lib).gg_cli_home(what.encode(), buf, len(buf))
    text = os.fsdecode(buf.value)
    if rc == 0:
        return text
    raise FileNotFoundError("ggfuzz's %s not found%s" % (what, ": tried " + text if rc > 0 else ""))
