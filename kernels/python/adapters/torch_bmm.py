"""torch.bmm as a ggfuzz kernel: the batched BF16 GEMM C_b = A_b . B_b^T (B as [N,K]) or A_b . B_b
(B as [K,N]), cuBLAS's strided-batched GEMM on an H100 (batched_bf16_torch_bmm).

A [B,M,K] is passed as it is; B is passed as B.transpose(1, 2) for the [N,K] layout and as it is
for [K,N], so both layouts are views of the harness's buffers and cuBLAS gets the transposition
through its op flags. A bf16 output is torch.bmm's own; an f32 output uses torch.bmm(...,
out_dtype=torch.float32) (Blas.cpp, _bmm_out_dtype_cuda: "out_dtype must be the same as input
dtype or fp32 for fp16/bf16 inputs"). The result is copied into the harness's output.

supports() refuses: inputs other than bf16, outputs other than bf16 or f32, scaling and bias
(torch.bmm has neither). torch.bmm itself takes any strides: where the strides of a batch do not
suit cuBLAS, aten copies the operand into a contiguous one first (prepare_batch_matrix_for_cublas
in Blas.cpp), which is the library's behaviour under test, not the adapter's.

    ggfuzz --plugin kernels/python/adapters/torch_bmm.py fuzz --kernel batched_bf16_torch_bmm
"""

import ggfuzz


def supports(p):
    if p.op != "batched" or p.a_dtype != "bf16" or p.b_dtype != "bf16":
        return "batched bf16 x bf16 only (op=%s a=%s b=%s)" % (p.op, p.a_dtype, p.b_dtype)
    if p.c_dtype not in ("bf16", "f32") or p.acc_dtype != "f32":
        return "bf16 or f32 output, f32 accumulation (c=%s)" % p.c_dtype
    if p.scaling != "none" or p.bias_dtype != "none":
        return "no scaling, no bias"
    return None


def run(p, o):
    import torch
    # The kernel claims f32 accumulation: torch lets cuBLAS reduce split-K partial sums of a
    # bf16 GEMM in bf16 unless this is off (its default is on), which breaks the f32 bound.
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    b = o.b.transpose(1, 2) if p.b_layout == "nk" else o.b
    if p.c_dtype == "f32":
        out = torch.bmm(o.a, b, out_dtype=torch.float32)
    else:
        out = torch.bmm(o.a, b)
    o.c.copy_(out)


ggfuzz.register(ggfuzz.Kernel(
    name="batched_bf16_torch_bmm", ops=("batched",), backend="cuda",
    summary="torch.bmm (bf16; B as [N,K] or [K,N] through a transposed view; bf16 or f32 out)",
    supports=supports, run=run))
