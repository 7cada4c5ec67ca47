"""A grouped BF16 GEMM written in Triton, as a ggfuzz kernel: the recipe to copy for testing your
own Triton kernel (docs/plugins-python.md, "Test your own Triton kernel").

grouped_bf16_triton_example computes the MoE forward Y_g = X_g . W_g^T for every expert g, with
X [M,K] (rows of group g: group_offs[g] .. group_offs[g+1]-1), W [G,N,K] and Y [M,N], bf16
inputs, fp32 accumulation, bf16 or f32 output. One program computes one BLOCK_M x BLOCK_N tile
of one group: the grid is (groups, tiles of the largest group's rows, tiles of N), and the tiles
past the end of a smaller group are masked off entirely. The M, N and K tails are masked, and
every offset is computed in int64 (group_offs is int64; the group index is widened before it
multiplies the expert stride of W, which passes 2^31 elements for real weight banks).

Two planted bugs (mutants) that a campaign should find:
  no_k_mask             the K tail is loaded without its mask: the last partial K block reads
                        past the end of each row (the next row, or the guard band), so any K
                        that is not a multiple of BLOCK_K gives wrong sums (an snr finding)
  group_end_off_by_one  the row mask lets one row past the group's end through: each group also
                        writes the first row of the next group with its own expert's weights, and
                        the last group writes one row past Y (oob_write, or snr/nondeterminism
                        when the next group's tile lands first)

    ggfuzz --plugin kernels/python/examples/triton_grouped.py run \\
        --kernel grouped_bf16_triton_example corpus/seeds
    ggfuzz --plugin kernels/python/examples/triton_grouped.py fuzz \\
        --kernel grouped_bf16_triton_example --mutant no_k_mask --max-total-time 120
"""

import ggfuzz

BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
_jit = {}


def supports(p):
    if p.op != "grouped_fwd":
        return "grouped_fwd only"
    if (p.a_dtype, p.b_dtype, p.acc_dtype) != ("bf16", "bf16", "f32"):
        return "bf16 inputs, f32 accumulation (a=%s b=%s)" % (p.a_dtype, p.b_dtype)
    if p.c_dtype not in ("bf16", "f32") or p.scaling != "none" or p.bias_dtype != "none":
        return "bf16 or f32 output, no scaling, no bias"
    return None


def _kernel():
    """The Triton kernel, defined on first use so that listing needs no Triton."""
    if _jit:
        return _jit["kernel"]
    import triton
    import triton.language as tl

    @triton.jit
    def grouped_fwd(x_ptr, w_ptr, y_ptr, offs_ptr, N, K, ldx, ldw, stride_w, ldy,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    NO_K_MASK: tl.constexpr, END_OFF_BY_ONE: tl.constexpr):
        g = tl.program_id(0).to(tl.int64)
        start = tl.load(offs_ptr + g)                 # int64 row offsets of group g
        end = tl.load(offs_ptr + g + 1)
        if END_OFF_BY_ONE:
            end += 1
        rows = start + tl.program_id(1).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.program_id(2).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
        row_ok = rows < end
        col_ok = cols < N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            k_ok = ks < K
            if NO_K_MASK:
                k_ok = ks >= 0
            x = tl.load(x_ptr + rows[:, None] * ldx + ks[None, :],
                        mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            w = tl.load(w_ptr + g * stride_w + cols[None, :] * ldw + ks[:, None],
                        mask=col_ok[None, :] & k_ok[:, None], other=0.0)
            acc = tl.dot(x, w, acc)                   # [BM, BK] x [BK, BN], fp32 accumulator
        y = y_ptr + rows[:, None] * ldy + cols[None, :]
        tl.store(y, acc.to(y_ptr.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])

    _jit["kernel"] = grouped_fwd
    return grouped_fwd


def run(p, o):
    import triton
    most_rows = int(max(p.group_lens)) if p.groups else 0
    if p.m == 0 or p.n == 0 or most_rows == 0:
        return                                        # an empty output: nothing to write
    grid = (p.groups, triton.cdiv(most_rows, BLOCK_M), triton.cdiv(p.n, BLOCK_N))
    _kernel()[grid](o.a, o.b, o.c, o.group_offs_dev, p.n, p.k, p.lda, p.ldb, p.stride_b, p.ldc,
                    BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                    NO_K_MASK=p.has_mutant("no_k_mask"),
                    END_OFF_BY_ONE=p.has_mutant("group_end_off_by_one"))


ggfuzz.register(ggfuzz.Kernel(
    name="grouped_bf16_triton_example", ops=("grouped_fwd",), backend="cuda",
    summary="example Triton grouped GEMM (bf16 fwd, fp32 accumulation, masked tails, int64 "
            "offsets)",
    supports=supports, run=run, mutants=("no_k_mask", "group_end_off_by_one"),
    tile=(BLOCK_M, BLOCK_N, BLOCK_K)))
