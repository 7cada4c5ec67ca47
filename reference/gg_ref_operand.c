/*
 * gg_ref_operand.c — where the operands of one group of a problem lie, for the references and
 * the oracles: its vectors (rows of A, columns of B as the output sees them), the reduction
 * and their strides in each op's layout, the moe row map, and the scales that apply to each
 * element under the case's recipe (the scale table of gg_kernel.h).
 */
#include "reference/ref_int.h"

static int is_grouped(enum gg_op op)
{
    return op == GG_OP_GROUPED_FWD || op == GG_OP_GROUPED_DGRAD || op == GG_OP_GROUPED_WGRAD;
}

static int64_t blocks128(int64_t n)
{
    return (n + GG_BLOCK128 - 1) / GG_BLOCK128;
}

/* A block scale of vblock vectors by block reduction indices, laid out from at with the
   strides of struct gg_ref_operand. */
static void set_blocks(struct gg_ref_operand *d, enum gg_ref_scale sk, int64_t vblock, int64_t block,
                       int64_t at, int64_t vstride, int64_t rstride)
{
    d->sk = sk;
    d->vblock = vblock;
    d->block = block;
    d->scale_at = at;
    d->vstride = vstride;
    d->rstride = rstride;
}

/* The scales of side which of group g, by recipe (the scale table of gg_kernel.h): A's per-row
   scales count rows across groups and batches; B's follow its matrix; wgrad's rowwise scales
   are per (group, column). Called once ref_operand_of has set the vectors and the reduction. */
static void scale_of(const struct gg_problem *p, const struct gg_operands *o, int which,
                     int64_t g, struct gg_ref_operand *d)
{
    int64_t mat = ref_mat_of(p, g), red_blocks = blocks128(d->red);
    int64_t whole = d->red > 0 ? d->red : 1; /* one block over the whole reduction */
    int wgrad = p->op == GG_OP_GROUPED_WGRAD, dgrad = p->op == GG_OP_GROUPED_DGRAD;
    d->sk = GG_REF_SCALE_NONE;
    d->scale = which ? o->b_scale : o->a_scale;
    switch (p->scaling) {
    case GG_SCALING_TENSOR:
    case GG_SCALING_BLOCK128:
        if (p->scaling == GG_SCALING_TENSOR || which) {
            d->sk = GG_REF_SCALE_TENSOR;
            d->tensor_at = which ? mat : 0;
        } else {
            set_blocks(d, GG_REF_SCALE_F32, 1, GG_BLOCK128, d->scale_row0 * red_blocks,
                       red_blocks, 1);
        }
        break;
    case GG_SCALING_MX:
    case GG_SCALING_MX_B:
        if (which || p->scaling == GG_SCALING_MX) {
            int64_t per_row = d->red / GG_MX_BLOCK;
            int64_t row0 = which ? mat * p->n : d->scale_row0;
            set_blocks(d, GG_REF_SCALE_E8M0, 1, GG_MX_BLOCK, row0 * per_row, per_row, 1);
        }
        break;
    case GG_SCALING_ROWWISE: /* vectors of A are output rows, of B output columns */
        if (!which)
            set_blocks(d, GG_REF_SCALE_F32, 1, whole, wgrad ? g * p->n : d->scale_row0, 1, 0);
        else
            set_blocks(d, GG_REF_SCALE_F32, 1, whole,
                       wgrad ? g * p->k : mat * (dgrad ? p->k : p->n), 1, 0);
        break;
    case GG_SCALING_BLOCKWISE:
        if (!which) {
            set_blocks(d, GG_REF_SCALE_F32, 1, GG_BLOCK128, d->scale_row0 * red_blocks,
                       red_blocks, 1);
        } else { /* [mat][N/128][K/128]; dgrad's vectors are the columns k, its reduction n */
            int64_t kb = blocks128(p->k), at = mat * blocks128(p->n) * kb;
            if (dgrad)
                set_blocks(d, GG_REF_SCALE_F32, GG_BLOCK128, GG_BLOCK128, at, 1, kb);
            else
                set_blocks(d, GG_REF_SCALE_F32, GG_BLOCK128, GG_BLOCK128, at, kb, 1);
        }
        break;
    default:
        break;
    }
}

void gg_ref_operand(const struct gg_problem *p, const struct gg_operands *o, int which,
                    int64_t g, struct gg_ref_operand *d)
{
    int64_t row0 = is_grouped(p->op) ? p->group_offs[g] : 0;
    int64_t len = is_grouped(p->op) ? p->group_lens[g] : 0;
    d->dt = which ? p->b_dtype : p->a_dtype;
    d->base = which ? o->b : o->a;
    d->vec_step = which ? p->ldb : p->lda;
    d->red_step = 1;
    d->red = p->k;
    d->map = NULL;
    d->map_div = 1;
    d->scale_row0 = 0;
    switch (p->op) {
    case GG_OP_GROUPED_FWD:
        d->off = which ? g * p->stride_b : row0 * p->lda;
        d->nvec = which ? p->n : len;
        d->scale_row0 = row0;
        break;
    case GG_OP_GROUPED_DGRAD:
        d->red = p->n;
        d->off = which ? g * p->stride_b : row0 * p->lda;
        d->nvec = which ? p->k : len;
        d->scale_row0 = row0;
        if (which) { /* column idx of W_g [N,K] */
            d->vec_step = 1;
            d->red_step = p->ldb;
        }
        break;
    case GG_OP_GROUPED_WGRAD: /* column idx of dY_g or X_g, reduced over the group's rows */
        d->red = len;
        d->off = row0 * d->vec_step;
        d->nvec = which ? p->k : p->n;
        d->red_step = d->vec_step;
        d->vec_step = 1;
        break;
    case GG_OP_BATCHED:
        d->off = g * (which ? p->stride_b : p->stride_a);
        d->nvec = which ? p->n : p->m;
        d->scale_row0 = g * p->m;
        if (which && p->b_layout == GG_LAYOUT_KN) {
            d->vec_step = 1;
            d->red_step = p->ldb;
        }
        break;
    case GG_OP_MOE_SORTED: { /* expert g: row r of its block is X[sorted id / topk] */
        struct gg_out_block b;
        gg_problem_out_block(p, g, &b);
        d->off = which ? g * p->stride_b : 0;
        d->nvec = which ? p->n : b.rows;
        if (!which) {
            d->map = b.row_map;
            d->map_div = p->topk;
        }
        break;
    }
    default: /* dense */
        d->off = 0;
        d->nvec = which ? p->n : p->m;
        break;
    }
    scale_of(p, o, which, g, d);
}

/* gg_ref_operand() on host operands, the tensor scale read. */
void ref_operand_of(const struct gg_problem *p, const struct gg_operands *o, int which,
                    int64_t g, struct gg_ref_operand *d)
{
    gg_ref_operand(p, o, which, g, d);
    d->tensor = d->sk == GG_REF_SCALE_TENSOR ? ((const float *)d->scale)[d->tensor_at] : 1.0;
}
