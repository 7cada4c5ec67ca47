"""torch._scaled_mm and torch.nn.functional.scaled_mm as ggfuzz kernels: the dense FP8 GEMM
C = A . B^T (cuBLASLt on an H100) in its three recipes of the ABI:

  dense_fp8_torch_scaled_mm_tensorwise  one fp32 per operand (torch._scaled_mm)
  dense_fp8_torch_scaled_mm_rowwise     one fp32 per row of A and per column of C, i.e. per row
                                        of B [N,K] (torch._scaled_mm, scale_a [M,1], scale_b [1,N])
  dense_fp8_torch_scaled_mm_blockwise   DeepSeek-V3's 1x128 (A) / 128x128 (B) blocks
                                        (torch.nn.functional.scaled_mm, the v2 API, with
                                        ScalingType Blockwise_1x128 and Blockwise_128x128)

A [M,K] is passed as it is (row-major) and B [N,K] as B.t(), the column-major [K,N] mat2 the
op wants on an H100 ("Only multiplication of row-major and column-major matrices is supported
by cuBLASLt", ScaledBlas.cpp _scaled_gemm). The tensorwise and rowwise scales are views of the
harness's scale arrays (a_scale float[M] viewed [M,1], b_scale float[1][N] as it is). The
blockwise recipe wants layouts the harness's packed scales do not have, so those two small
tensors are copied (never the operands): scale_a [M, ceil(K/128)] "outer-dim-major", strides
(1, M); scale_b [round_up(ceil(K/128), 4), ceil(N/128)] with strides (1, round_up(ceil(K/128),
4)), i.e. the harness's b_scale [ceil(N/128)][ceil(K/128)] with each row padded to a multiple
of 4 floats (ScaledBlas.cpp, _scaled_block1x128_block128x128). The padding is filled with NaN:
a kernel that read it would show. The result is copied into the harness's output.

supports() states what the op refuses, each with its check (ScaledBlas.cpp unless named):
- K and N multiples of 16: "Expected trailing dimension of mat1 to be divisible by 16",
  "mat2 shape (...) must be divisible by 16".
- e5m2 x e5m2: "Multiplication of two Float8_e5m2 matrices is not supported"; the fnuz
  formats are ROCm's (ScalarTypeToCudaDataType in ATen/cuda/CUDADataType.h maps them only
  under ROCm).
- lda and ldb multiples of 16 bytes and 16-byte aligned bases: cuBLASLt's FP8 matrix layout
  requirements (the op passes the strides through, cublasCommonArgs).
- outputs bf16, f16 or f32; a bias only in bf16 with a bf16 output (tensorwise, rowwise):
  "Bias is not supported when out_dtype is set to Float32", "Bias must be BFloat16 to compute
  BFloat16 output"; the harness has no f16 bias.
- blockwise: e4m3 x e4m3 only (ScaledBlasUtils check_deepseek_recipe: both Float8_e4m3fn),
  compute capability 9.0 only (_check_deepseek_support), bf16 or f32 output; no bias here (the
  blockwise path is not documented with one).
Dense only: a batched case through a loop of _scaled_mm calls would test the loop, not a kernel.

    ggfuzz --plugin kernels/python/adapters/torch_scaled_mm.py fuzz \\
        --kernel dense_fp8_torch_scaled_mm_blockwise
"""

import ggfuzz

ALIGN = 16       # one-byte elements: 16 bytes
BLOCK = 128      # the 1x128 / 128x128 block side
OUT_TYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}
FP8 = ("e4m3", "e5m2")


def _cdiv(a, b):
    return -(-a // b)


def _supports(p, scaling):
    if p.op != "dense" or p.scaling != scaling:
        return "dense with %s scaling only (op=%s scaling=%s)" % (scaling, p.op, p.scaling)
    if p.a_dtype not in FP8 or p.b_dtype not in FP8:
        return "OCP e4m3/e5m2 inputs only (a=%s b=%s; fnuz is ROCm's)" % (p.a_dtype, p.b_dtype)
    if p.a_dtype == p.b_dtype == "e5m2":
        return "e5m2 x e5m2 is refused by torch._scaled_mm"
    if p.acc_dtype != "f32" or p.c_dtype not in OUT_TYPES:
        return "f32 accumulation and a bf16, f16 or f32 output"
    if p.n % ALIGN or p.k % ALIGN:
        return "N and K must be multiples of 16: N=%d K=%d" % (p.n, p.k)
    if p.lda % ALIGN or p.ldb % ALIGN:
        return "lda and ldb must be multiples of 16 bytes"
    if scaling == "blockwise":
        if (p.a_dtype, p.b_dtype) != ("e4m3", "e4m3"):
            return "blockwise takes e4m3 x e4m3 only"
        if p.c_dtype == "f16" or p.bias_dtype != "none":
            return "blockwise: bf16 or f32 output, no bias"
        if p.m % ALIGN:
            return ("blockwise: M must be a multiple of 16 (cuBLASLt finds no algorithm for "
                    "M = 1 or 33: CUBLAS_STATUS_NOT_SUPPORTED from cublasLtMatmulAlgoGetHeuristic"
                    " on an H100, cuBLAS 13; 16, 64, 128 and 256 run)")
    elif p.bias_dtype != "none" and (p.bias_dtype, p.c_dtype) != ("bf16", "bf16"):
        return "a bias must be bf16 with a bf16 output (bias=%s c=%s)" % (p.bias_dtype,
                                                                          p.c_dtype)
    return None


def _check_aligned(o):
    for name, t in (("A", o.a), ("B", o.b)):
        if t.numel() and t.data_ptr() % 16:
            raise RuntimeError("%s is not 16-byte aligned" % name)


def _bias(o):
    return o.bias.reshape(-1) if o.bias is not None else None


def _run_tensorwise(p, o):
    import torch
    _check_aligned(o)
    out = torch._scaled_mm(o.a, o.b.t(), o.a_scale, o.b_scale, bias=_bias(o),
                           out_dtype=getattr(torch, OUT_TYPES[p.c_dtype]))
    o.c.copy_(out)


def _run_rowwise(p, o):
    import torch
    _check_aligned(o)
    out = torch._scaled_mm(o.a, o.b.t(), o.a_scale.view(p.m, 1), o.b_scale, bias=_bias(o),
                           out_dtype=getattr(torch, OUT_TYPES[p.c_dtype]))
    o.c.copy_(out)


def _recipe(ScalingType, *names):
    """The first of names that this torch's ScalingType has."""
    for n in names:
        if hasattr(ScalingType, n):
            return getattr(ScalingType, n)
    raise RuntimeError("torch.nn.functional.ScalingType has none of %s" % ", ".join(names))


def _run_blockwise(p, o):
    import torch
    import torch.nn.functional as F
    _check_aligned(o)
    kb, nb = _cdiv(p.k, BLOCK), _cdiv(p.n, BLOCK)
    k4 = _cdiv(kb, 4) * 4
    dev = o.a.device
    sa = torch.empty_strided((p.m, kb), (1, max(p.m, 1)), dtype=torch.float32, device=dev)
    sa.copy_(o.a_scale)
    sb = torch.full((nb, k4), float("nan"), dtype=torch.float32, device=dev)
    sb[:, :kb].copy_(o.b_scale[0])
    r1x128 = _recipe(F.ScalingType, "Blockwise_1x128", "BlockWise1x128")
    r128x128 = _recipe(F.ScalingType, "Blockwise_128x128", "BlockWise128x128")
    out = F.scaled_mm(o.a, o.b.t(), sa, r1x128, sb.t(), r128x128,
                      output_dtype=getattr(torch, OUT_TYPES[p.c_dtype]), use_fast_accum=False)
    o.c.copy_(out)


def _kernel(variant, scaling, run, summary):
    return ggfuzz.Kernel(name="dense_fp8_torch_scaled_mm_" + variant, ops=("dense",),
                         backend="cuda", summary=summary,
                         supports=lambda p: _supports(p, scaling), run=run)


ggfuzz.register(
    _kernel("tensorwise", "tensor", _run_tensorwise,
            "torch._scaled_mm (fp8 tensorwise, cuBLASLt)"),
    _kernel("rowwise", "rowwise", _run_rowwise,
            "torch._scaled_mm (fp8 rowwise: scale_a [M,1], scale_b [1,N])"),
    _kernel("blockwise", "blockwise", _run_blockwise,
            "torch.nn.functional.scaled_mm (e4m3 blockwise 1x128 / 128x128, sm90)"))
