"""Test-only Python plugin (test_cli_python) that misbehaves where GG_HOSTILE says, in the ways
that end a process rather than raise: import_exit (os._exit(0) at import), import_segv (a
segfault at import), import_hang (an import that never returns), supports_exit (os._exit(0) in
every supports() call), supports_segv (a segfault in supports() on every problem whose N is not
64: the generator's capability probe asks only about N = K = 64, the cases it draws seldom).
Without GG_HOSTILE its kernel, grouped_bf16_hostile_py, is a correct bf16 grouped forward GEMM
with fp32 output."""
import ctypes
import os
import time

import ggfuzz

HOSTILE = os.environ.get("GG_HOSTILE", "")
if HOSTILE == "import_exit":
    os._exit(0)
if HOSTILE == "import_segv":
    ctypes.string_at(16)
if HOSTILE == "import_hang":
    while True:
        time.sleep(1)


def supports(p):
    if HOSTILE == "supports_exit":
        os._exit(0)
    if HOSTILE == "supports_segv" and p.n != 64:
        ctypes.string_at(16)
    if (p.op, p.a_dtype, p.b_dtype, p.c_dtype, p.scaling, p.bias_dtype) != \
            ("grouped_fwd", "bf16", "bf16", "f32", "none", "none"):
        return "grouped_fwd bf16 x bf16 -> f32 only"
    return None


def run(p, o):
    x = ggfuzz.bf16_to_f32
    for g in range(p.groups):
        lo, hi = int(p.group_offs[g]), int(p.group_offs[g + 1])
        o.c[lo:hi] = x(o.a[lo:hi]) @ x(o.b[g]).T


ggfuzz.register(ggfuzz.Kernel(name="grouped_bf16_hostile_py", ops=["grouped_fwd"],
                              supports=supports, run=run))
