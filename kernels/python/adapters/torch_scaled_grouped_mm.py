"""torch._scaled_grouped_mm as a ggfuzz kernel: the FP8 grouped GEMM of torchtitan's FP8 MoE
layers, rowwise recipe (e4m3 x e4m3 -> bf16, one fp32 scale per row of X and one per (group,
column) of W; CUTLASS sm90 kernels on an H100), forward only (2D x 3D), with fast accumulation off
(grouped_fp8_torch_scaled_grouped_mm). With use_fast_accum=True the FP8 tensor cores accumulate
without promotion to fp32: that is not the f32 accumulation a ggfuzz kernel declares, and the
oracles have no bound for it (oracles/gg_threshold.c: fast accumulation has no problem field), so
a campaign of it reports the expected loss (snr .../degraded findings), not a defect; it is not
registered.

Operands are passed as views, never copied: X [M,K] is row-major as the op wants; W [G,N,K]
passed as W.transpose(-2, -1) is the column-major [G,K,N] it wants for b; the harness's a_scale
float[M] is scale_a as it is and b_scale float[G][N] is viewed as scale_b [G,N]. The result is
copied into the harness's output.

Why forward only: the op takes a row-major a and a column-major b and nothing else
(GroupedBlas.cpp, _scaled_grouped_mm_cuda: "Expected mat1 to not be transposed", "Expected mat2
to be transposed"). dgrad (dX_g = dY_g . W_g) needs W_g [N,K] as a column-major b, but the
harness stores it row-major: only a copy of W (W.transpose(-2,-1).contiguous()) would do.
wgrad (dW_g = dY_g^T . X_g) needs dY^T [N,M] row-major as a, and dY is stored [M,N] row-major:
again a copy of dY (torchao's FP8 MoE training makes exactly that copy). Neither is a view.

supports() states what the op refuses, each with its check:
- e4m3 (OCP) inputs only: _f8_f8_bf16_rowwise_grouped_mm_cuda, "Expected mat_a to be
  Float8_e4m3"; bf16 output only: "Only bf16 high precision output types are supported";
  no bias ("Bias not supported yet").
- K, and both dimensions of b (K and N), multiples of 16: "Expected trailing dimension of mat_a
  to be divisible by 16", "Expected mat_b shape to be divisible by 16".
- base pointers 16-byte aligned and the non-unit stride of each matrix a multiple of 16 bytes
  (GroupedMMUtils.h, check_valid_strides_and_return_transposed); the expert stride of W a
  multiple of 16 bytes, since each group's B pointer is a TMA base (GroupMMCommon.cuh,
  prepare_grouped_gemm_data: B + tid * stride_B[0]).
- fewer than 1024 groups (ScaledGroupMM.cu, "Can't process more than 1024 groups"); M, N, K in
  int32 (the CUTLASS problem shape is int32 per group, and offs is int32).
- compute capability 9.0 or 10.0 (_scaled_mm_allowed_device): checked by the op itself.

    ggfuzz --plugin kernels/python/adapters/torch_scaled_grouped_mm.py fuzz \\
        --kernel grouped_fp8_torch_scaled_grouped_mm
"""

import ggfuzz

MAX_GROUPS = 1024
INT32_MAX = 2**31 - 1
ALIGN = 16  # elements of one byte: 16 bytes


def supports(p):
    if p.op != "grouped_fwd":
        return "forward only: dgrad and wgrad need a copy of W or dY (see the docstring)"
    if (p.a_dtype, p.b_dtype) != ("e4m3", "e4m3") or p.scaling != "rowwise":
        return "e4m3 x e4m3 with rowwise scales only (a=%s b=%s scaling=%s)" % (
            p.a_dtype, p.b_dtype, p.scaling)
    if p.c_dtype != "bf16" or p.acc_dtype != "f32" or p.bias_dtype != "none":
        return "bf16 output, f32 accumulation, no bias"
    if p.groups >= MAX_GROUPS:
        return "torch._scaled_grouped_mm takes fewer than %d groups (%d)" % (MAX_GROUPS, p.groups)
    if max(p.m, p.n, p.k) > INT32_MAX:
        return "sizes past int32"
    if p.n % ALIGN or p.k % ALIGN:
        return "N and K must be multiples of 16: N=%d K=%d" % (p.n, p.k)
    if p.lda % ALIGN or p.ldb % ALIGN or p.stride_b % ALIGN:
        return "lda, ldb and the expert stride of W must be multiples of 16 bytes"
    return None


def run(p, o):
    import torch
    for name, t in (("A", o.a), ("B", o.b)):
        if t.numel() and t.data_ptr() % 16:
            raise RuntimeError("%s is not 16-byte aligned" % name)
    offs = torch.tensor(p.group_offs[1:].astype("int32"), device=o.a.device)
    out = torch._scaled_grouped_mm(o.a, o.b.transpose(-2, -1), o.a_scale, o.b_scale, offs=offs,
                                   out_dtype=torch.bfloat16, use_fast_accum=False)
    o.c.copy_(out)


ggfuzz.register(ggfuzz.Kernel(
    name="grouped_fp8_torch_scaled_grouped_mm", ops=("grouped_fwd",), backend="cuda",
    summary="torch._scaled_grouped_mm (e4m3 rowwise -> bf16, fwd 2Dx3D)",
    supports=supports, run=run))
