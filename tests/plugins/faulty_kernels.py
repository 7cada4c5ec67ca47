"""Test-only Python kernels (test_cli_python, test_cli_gpus): a correct grouped forward in NumPy
that fails, in three ways, on a problem with an empty group: grouped_bf16_pyfault_raises raises,
_aborts calls os.abort() and _hangs never returns. Problems without an empty group pass.
grouped_bf16_pyfault_slow_start zeroes the groups that follow an empty group, and its first call
in a process takes 3 s. grouped_bf16_pyfault_strides raises when an operand's strides are not the
problem's (an empty operand's included), as a kernel that checks its operands' layout would.
grouped_bf16_pyfault_on_gpu1 aborts on every problem in a process bound to GPU 1. A process
bound to the GPU that GGFUZZ_TEST_UNUSABLE_GPU names cannot load this plugin at all, as a worker
on a GPU that fails every start."""

import os
import time

import numpy as np

import ggfuzz

if os.environ.get("GGFUZZ_DEVICE", "-") == os.environ.get("GGFUZZ_TEST_UNUSABLE_GPU"):
    raise RuntimeError("planted: GPU %s is unusable" % os.environ["GGFUZZ_DEVICE"])


def supports(p):
    if (p.a_dtype, p.b_dtype) != ("bf16", "bf16") or p.c_dtype not in ("bf16", "f32"):
        return "bf16 inputs, bf16 or f32 output only"
    if p.scaling != "none" or p.bias_dtype != "none":
        return "no scaling, no bias"
    return None


@np.errstate(all="ignore")
def forward(p, o):
    x = ggfuzz.bf16_to_f32
    for g in range(p.groups):
        lo, hi = int(p.group_offs[g]), int(p.group_offs[g + 1])
        acc = x(o.a[lo:hi]) @ x(o.b[g]).T
        if p.c_dtype == "bf16":
            ggfuzz.f32_to_bf16(acc, out=o.c[lo:hi])
        else:
            o.c[lo:hi] = acc


def empty_group(p):
    return bool((p.group_lens == 0).any())


def raises(p, o):
    if empty_group(p):
        raise ValueError("planted failure: an empty group among %d" % p.groups)
    forward(p, o)


def aborts(p, o):
    if empty_group(p):
        os.abort()
    forward(p, o)


def hangs(p, o):
    while empty_group(p):
        time.sleep(1)
    forward(p, o)


def strides(p, o):
    for name, (shape, want) in p.shapes().items():
        t = getattr(o, name)
        got = tuple(s // t.itemsize for s in t.strides)
        if tuple(t.shape) != tuple(shape) or got != tuple(want):
            raise ValueError("%s is %s with strides %s, not %s with %s"
                             % (name, tuple(t.shape), got, tuple(shape), tuple(want)))
    forward(p, o)


_runs_in_this_process = 0


def slow_start(p, o):
    """Zeroes the rows of each group that follows an empty group, and its first call in a
    process takes 3 s (a kernel that compiles on its first call): each run in a fresh process
    is slow."""
    global _runs_in_this_process
    _runs_in_this_process += 1
    if _runs_in_this_process == 1:
        time.sleep(3)
    forward(p, o)
    for g in range(1, p.groups):
        if p.group_lens[g - 1] == 0:
            o.c[int(p.group_offs[g]):int(p.group_offs[g + 1])] = 0


for name, fn in (("raises", raises), ("aborts", aborts), ("hangs", hangs),
                 ("strides", strides), ("slow_start", slow_start)):
    ggfuzz.register(ggfuzz.Kernel(name="grouped_bf16_pyfault_" + name, ops=("grouped_fwd",),
                                  supports=supports, run=fn))


def on_gpu1(p, o):
    """Correct, but aborts in a process bound to GPU 1 (`--gpus`, GGFUZZ_DEVICE=1): a fault on one
    GPU only. Every process checks its binding first: CUDA_VISIBLE_DEVICES must name its device
    alone, the GGFUZZ_DEVICE-th entry of GGFUZZ_TEST_VISIBLE (the parent's list) when the test
    sets that; a wrong binding raises."""
    device = os.environ.get("GGFUZZ_DEVICE")
    parent = os.environ.get("GGFUZZ_TEST_VISIBLE")
    if device is None:
        raise RuntimeError("not bound to a device: GGFUZZ_DEVICE is not set")
    want = parent.split(",")[int(device)] if parent else device
    if os.environ.get("CUDA_VISIBLE_DEVICES") != want:
        raise RuntimeError("GPU %s: CUDA_VISIBLE_DEVICES=%r, not %r"
                           % (device, os.environ.get("CUDA_VISIBLE_DEVICES"), want))
    if device == "1":
        os.abort()
    forward(p, o)


ggfuzz.register(ggfuzz.Kernel(name="grouped_bf16_pyfault_on_gpu1", ops=("grouped_fwd",),
                              supports=supports, run=on_gpu1))
