"""`python -m ggfuzz ARGS...`: the ggfuzz command line in a Python process, so that plugins may
be Python files. It loads libggfuzz.so (GGFUZZ_LIB, else as _locate finds it) with ctypes, checks
that the ctypes mirror of the kernel ABI matches the library's layout, installs the loader of
Python plugins, makes the campaign's workers start as this interpreter with `-m ggfuzz`, gives
the signals the dispositions the ggfuzz executable starts with, runs gg_cli_main() and exits
with its code. A library or package that cannot be loaded is a message and exit code 3.

`python -m ggfuzz --handshake` only answers "ggfuzz-host TOKEN" (TOKEN from GGFUZZ_HANDSHAKE):
the ggfuzz executable asks it before handing over, so that a GGFUZZ_PYTHON that is not a Python
running this package is refused instead of deciding ggfuzz's exit code."""

import ctypes as C
import os
import signal
import sys

from . import _locate

EXIT_HARNESS = 3


def _fail(msg):
    sys.stderr.write("ggfuzz: %s\n" % msg)
    sys.stderr.flush()
    os._exit(EXIT_HARNESS)


def _library():
    try:
        path = _locate.library()
    except FileNotFoundError as e:
        _fail(str(e))
    try:
        lib = _locate.load(path)
    except OSError as e:
        _fail("cannot load %s: %s" % (path, e))
    os.environ["GGFUZZ_LIB"] = path  # for the workers, and this process's ggfuzz.cases
    return lib


def _pythons_with(module):
    """The python3 and python3.N on PATH (one name per file, in PATH's order) that import module
    in this environment: each is started once, so this runs only on the error path."""
    import re
    import subprocess
    found, seen = [], set()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = sorted(n for n in os.listdir(d or ".") if re.fullmatch(r"python3(\.\d+)?", n))
        except OSError:
            continue
        for n in names:
            path = os.path.join(d or ".", n)
            real = os.path.realpath(path)
            if real in seen or not os.access(path, os.X_OK) or os.path.isdir(path):
                continue
            seen.add(real)
            try:
                r = subprocess.run([path, "-c", "import " + module], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if r.returncode == 0:
                found.append(os.path.abspath(path))
    return found


def main():
    if sys.argv[1:] == ["--handshake"]:
        sys.stdout.write("ggfuzz-host %s\n" % os.environ.get("GGFUZZ_HANDSHAKE", ""))
        sys.stdout.flush()
        os._exit(0)
    lib = _library()
    try:
        from . import _abi, _host
    except ImportError as e:
        name = e.name or "it"
        others = _pythons_with(name) if e.name else []
        _fail("the Python host cannot start under %s: %s; set GGFUZZ_PYTHON to a Python 3 "
              "interpreter that can import %s (e.g. a virtual environment's bin/python)%s"
              % (sys.executable, e, name,
                 "; found on PATH with %s: %s" % (name, ", ".join(others)) if others else
                 "; no python3 or python3.N on PATH imports %s" % name if e.name else ""))
    lib.gg_cli_abi_layout.restype = C.POINTER(_abi.AbiEntry)
    diffs = _abi.layout_differences(lib.gg_cli_abi_layout())
    if diffs:
        more = " (and %d more)" % (len(diffs) - 4) if len(diffs) > 4 else ""
        _fail("%s and the Python package (%s) disagree on the kernel ABI: %s%s"
              % (os.environ["GGFUZZ_LIB"], os.path.dirname(__file__), "; ".join(diffs[:4]),
                 more))
    lib.gg_cli_set_plugin_loader.argtypes = [_abi.LOADER_FN]
    lib.gg_cli_set_plugin_loader(_host.loader)
    # Workers are this interpreter again, finding this package and this library.
    self_cmd = [sys.executable, "-m", "ggfuzz"]
    words = (C.c_char_p * len(self_cmd))(*[os.fsencode(w) for w in self_cmd])
    if lib.gg_cli_set_self(len(self_cmd), words) != 0:
        _fail("cannot set the command that starts workers")
    # Commands printed to run this again name this interpreter and, started directly rather than
    # by the ggfuzz executable, the executable of this library's ggfuzz (cli_invocation.c).
    os.environ.setdefault("GGFUZZ_PYTHON", sys.executable)
    if not os.environ.get("GGFUZZ_EXE"):
        try:
            os.environ["GGFUZZ_EXE"] = _locate.home("exe")
        except FileNotFoundError:
            pass
    pkg_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH", "")
    if pkg_dir not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = pkg_dir + (os.pathsep + path if path else "")
    # The ggfuzz executable starts with these at their defaults; Python changes them.
    for name in ("SIGINT", "SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    args = sys.argv[1:]
    cmd = 0
    while cmd + 1 < len(args) and args[cmd] == "--plugin":
        cmd += 2
    if args[cmd:cmd + 1] == ["worker"]:
        sys.stdout = sys.stderr  # a worker's stdout is its channel to the supervisor
    else:
        sys.stdout.reconfigure(line_buffering=True)  # a forked run's prints are not lost
    argv = [b"ggfuzz"] + [os.fsencode(a) for a in args]
    c_argv = (C.c_char_p * (len(argv) + 1))(*argv, None)
    lib.gg_cli_main.argtypes = [C.c_int, C.POINTER(C.c_char_p)]
    rc = lib.gg_cli_main(len(argv), c_argv)
    sys.stdout.flush()
    sys.stderr.flush()
    C.CDLL(None).fflush(None)
    # No interpreter teardown: the kernels' frameworks (a GPU runtime) may not survive it.
    os._exit(rc)


if __name__ == "__main__":
    main()
