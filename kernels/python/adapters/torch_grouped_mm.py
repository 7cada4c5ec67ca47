"""torch._grouped_mm as a ggfuzz kernel: the grouped BF16 GEMM that PyTorch's MoE layers call
(CUTLASS sm90 kernels on an H100), in its three uses: forward (2D x 3D, W passed as
weight.transpose(-2, -1)), dgrad (2D x 3D) and wgrad (2D x 2D, ragged K). The harness's operands
are passed as views, never copied; the result is copied into the harness's output.

supports() states what the op refuses (aten GroupedBlas.cpp / GroupMMCommon.cuh): bf16 inputs
and output; no scaling, no bias; fewer than 1024 groups; per-group sizes and the total row count
in int32; base pointers 16-byte aligned and every stride but the unit one a multiple of 16 bytes
(8 bf16 elements); for wgrad, whose ragged dimension is contiguous in dY^T, every group's row
count a multiple of 8 but the last's, and not all groups empty.

    ggfuzz --plugin kernels/python/adapters/torch_grouped_mm.py fuzz \
        --kernel grouped_bf16_torch_grouped_mm

Not yet stated here, so they reach the campaign as kernel errors ("could not run"), not as
findings: operands whose base is not 16-byte aligned (run() checks it), empty wgrad operands with
a leading dimension of 0 (torch: "Invalid strides/sizes"), and operands in sparse device buffers
whose first bytes are unmapped, which torch.as_tensor takes for host memory.
"""

import ggfuzz

MAX_GROUPS = 1024
INT32_MAX = 2**31 - 1


def _aligned(*elems):
    return all(int(e) % 8 == 0 for e in elems)


def supports(p):
    if (p.a_dtype, p.b_dtype, p.c_dtype) != ("bf16", "bf16", "bf16"):
        return "bf16 inputs and output only (a=%s b=%s c=%s)" % (p.a_dtype, p.b_dtype, p.c_dtype)
    if p.acc_dtype != "f32" or p.scaling != "none" or p.bias_dtype != "none":
        return "f32 accumulation, no scaling, no bias"
    if p.groups >= MAX_GROUPS:
        return "torch._grouped_mm takes fewer than %d groups (%d)" % (MAX_GROUPS, p.groups)
    if p.m > INT32_MAX or p.n > INT32_MAX or p.k > INT32_MAX:
        return "sizes past int32"
    if not _aligned(p.n, p.k):
        return "N and K must be multiples of 8 (16 bytes): N=%d K=%d" % (p.n, p.k)
    if not _aligned(p.lda, p.ldb, p.ldc):
        return "leading dimensions must be multiples of 8 elements"
    if p.op != "grouped_wgrad" and not _aligned(p.stride_b):
        return "the expert stride of W must be a multiple of 8 elements"
    if p.op == "grouped_wgrad":
        if p.m == 0:
            return "wgrad: a total K of 0 is refused by torch._grouped_mm (pytorch#192497)"
        lens = p.group_lens
        if any(int(x) % 8 for x in lens[:-1]):
            return "wgrad: each group's rows but the last's must be a multiple of 8"
        if not _aligned(p.stride_c):
            return "the expert stride of dW must be a multiple of 8 elements"
    return None


def run(p, o):
    import torch
    for name, t in (("A", o.a), ("B", o.b), ("C", o.c)):
        if t.numel() and t.data_ptr() % 16:
            raise RuntimeError("%s is not 16-byte aligned" % name)
    offs = torch.tensor(p.group_offs[1:].astype("int32"), device=o.a.device)
    if p.op == "grouped_fwd":      # Y_g = X_g . W_g^T: W as [G, K, N], column-major per group
        out = torch._grouped_mm(o.a, o.b.transpose(-2, -1), offs=offs)
    elif p.op == "grouped_dgrad":  # dX_g = dY_g . W_g
        out = torch._grouped_mm(o.a, o.b, offs=offs)
    else:                          # dW_g = dY_g^T . X_g, ragged K
        out = torch._grouped_mm(o.a.t(), o.b, offs=offs)
    o.c.copy_(out)


ggfuzz.register(ggfuzz.Kernel(
    name="grouped_bf16_torch_grouped_mm", ops=("grouped_fwd", "grouped_dgrad", "grouped_wgrad"),
    backend="cuda", summary="torch._grouped_mm (bf16; fwd 2Dx3D, dgrad 2Dx3D, wgrad 2Dx2D)",
    supports=supports, run=run))
