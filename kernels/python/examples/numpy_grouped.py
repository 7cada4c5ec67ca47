"""A grouped BF16 GEMM in NumPy, as a ggfuzz Python plugin: forward, dgrad and wgrad with bf16
inputs, fp32 accumulation (NumPy's float32 matmul) and a bf16 or fp32 output, one matmul per
group. Mutant empty_group_garbage re-creates the empty-expert wgrad bug: a group without tokens
gets the previous group's stale accumulator (ones for the first group) instead of zeros.

    ggfuzz --plugin kernels/python/examples/numpy_grouped.py list
    ggfuzz --plugin kernels/python/examples/numpy_grouped.py fuzz \\
        --kernel grouped_bf16_numpy_ref --mutant empty_group_garbage --max-total-time 30

test_numpy_grouped.py beside it tests it with pytest (ggfuzz's pytest plugin).
"""

import numpy as np

import ggfuzz


def supports(p):
    if p.a_dtype != "bf16" or p.b_dtype != "bf16":
        return "inputs must be bf16 (a=%s b=%s)" % (p.a_dtype, p.b_dtype)
    if p.c_dtype not in ("bf16", "f32"):
        return "output must be bf16 or f32, not %s" % p.c_dtype
    if p.acc_dtype != "f32":
        return "accumulates in f32 only"
    if p.scaling != "none":
        return "no scaling recipe (%s)" % p.scaling
    if p.bias_dtype != "none":
        return "no bias"
    return None


@np.errstate(all="ignore")  # Inf and NaN inputs are part of the data ggfuzz draws
def run(p, o):
    x = ggfuzz.bf16_to_f32
    stale = np.ones((p.n, p.k), dtype=np.float32)
    for g in range(p.groups):
        lo, hi = int(p.group_offs[g]), int(p.group_offs[g + 1])
        if p.op == "grouped_fwd":      # Y_g = X_g . W_g^T
            if hi == lo:
                continue
            acc, out = x(o.a[lo:hi]) @ x(o.b[g]).T, o.c[lo:hi]
        elif p.op == "grouped_dgrad":  # dX_g = dY_g . W_g
            if hi == lo:
                continue
            acc, out = x(o.a[lo:hi]) @ x(o.b[g]), o.c[lo:hi]
        else:                          # dW_g = dY_g^T . X_g; an empty group gives zeros
            acc, out = x(o.a[lo:hi]).T @ x(o.b[lo:hi]), o.c[g]
            if hi == lo and p.has_mutant("empty_group_garbage"):
                acc = stale
            stale = acc
        if p.c_dtype == "bf16":
            ggfuzz.f32_to_bf16(acc, out=out)
        else:
            out[...] = acc


KERNEL = ggfuzz.register(ggfuzz.Kernel(
    name="grouped_bf16_numpy_ref", ops=("grouped_fwd", "grouped_dgrad", "grouped_wgrad"),
    backend="cpu", summary="grouped fwd/dgrad/wgrad in NumPy, bf16 in, fp32 acc, bf16/f32 out",
    mutants=("empty_group_garbage",), supports=supports, run=run))
