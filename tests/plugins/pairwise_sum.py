"""A correct grouped forward GEMM that sums each dot product in a pairwise tree (fp32 products,
fp32 sums, bf16 or fp32 output), as a ggfuzz Python plugin for campaigns. Its order of summation
differs from a matmul's, and NumPy's a + b of a +NaN and a -NaN gives either sign depending on
the arrays' alignment, so its NaNs may change sign from run to run while every other output is
the same bits: ggfuzz must not call that nondeterminism.

    ggfuzz --plugin tests/plugins/pairwise_sum.py fuzz --kernel grouped_bf16_numpy_pairwise
"""

import numpy as np

import ggfuzz

MAX_PRODUCTS = 1 << 24  # M*N*K products held at once


def supports(p):
    if p.a_dtype != "bf16" or p.b_dtype != "bf16":
        return "inputs must be bf16 (a=%s b=%s)" % (p.a_dtype, p.b_dtype)
    if p.c_dtype not in ("bf16", "f32") or p.acc_dtype != "f32":
        return "f32 accumulation, bf16 or f32 output"
    if p.scaling != "none" or p.bias_dtype != "none":
        return "no scaling recipe, no bias"
    if int(p.group_offs[p.groups]) * p.n * p.k > MAX_PRODUCTS:
        return "at most %d products" % MAX_PRODUCTS
    return None


def pairwise(t):
    """Sums the last axis of t in a pairwise tree."""
    while t.shape[-1] > 1:
        if t.shape[-1] % 2:
            t = np.concatenate([t, np.zeros(t.shape[:-1] + (1,), t.dtype)], axis=-1)
        t = t[..., 0::2] + t[..., 1::2]
    return t[..., 0] if t.shape[-1] == 1 else np.zeros(t.shape[:-1], t.dtype)


@np.errstate(all="ignore")  # Inf and NaN inputs are part of the data ggfuzz draws
def run(p, o):
    x = ggfuzz.bf16_to_f32
    for g in range(p.groups):
        lo, hi = int(p.group_offs[g]), int(p.group_offs[g + 1])
        if hi == lo:
            continue
        products = x(o.a[lo:hi])[:, None, :] * x(o.b[g])[None, :, :]
        acc = pairwise(products)
        if p.c_dtype == "bf16":
            ggfuzz.f32_to_bf16(acc, out=o.c[lo:hi])
        else:
            o.c[lo:hi] = acc


ggfuzz.register(ggfuzz.Kernel(
    name="grouped_bf16_numpy_pairwise", ops=("grouped_fwd",), backend="cpu",
    summary="grouped fwd in NumPy, fp32 products summed in a pairwise tree",
    supports=supports, run=run))
