/*
 * cli_abi.c — the layout of the kernel ABI's structs as this build compiled them
 * (gg_cli_abi_layout(), gg_cli.h): the size of each struct of gg_kernel.h that crosses the
 * library's boundary and the offset of each of its fields, so that a host mirroring them (the
 * Python package's ctypes structures) can refuse to run when its mirror differs.
 */
#include <stddef.h>

#include "fuzz/cli/gg_cli.h"

#define STRUCT(s) {#s, sizeof(struct s)}
#define FIELD(s, f) {#s "." #f, offsetof(struct s, f)}

static const struct gg_cli_abi_entry LAYOUT[] = {
    {"GG_KERNEL_ABI_VERSION", GG_KERNEL_ABI_VERSION},
    STRUCT(gg_kopt),
    FIELD(gg_kopt, key),
    FIELD(gg_kopt, value),
    STRUCT(gg_problem),
    FIELD(gg_problem, op),
    FIELD(gg_problem, a_dtype),
    FIELD(gg_problem, b_dtype),
    FIELD(gg_problem, c_dtype),
    FIELD(gg_problem, acc_dtype),
    FIELD(gg_problem, scaling),
    FIELD(gg_problem, b_layout),
    FIELD(gg_problem, groups),
    FIELD(gg_problem, m),
    FIELD(gg_problem, n),
    FIELD(gg_problem, k),
    FIELD(gg_problem, lda),
    FIELD(gg_problem, ldb),
    FIELD(gg_problem, ldc),
    FIELD(gg_problem, stride_a),
    FIELD(gg_problem, stride_b),
    FIELD(gg_problem, stride_c),
    FIELD(gg_problem, group_lens),
    FIELD(gg_problem, group_offs),
    FIELD(gg_problem, bias_dtype),
    FIELD(gg_problem, topk),
    FIELD(gg_problem, block_m),
    FIELD(gg_problem, sorted_len),
    FIELD(gg_problem, sorted_ids),
    FIELD(gg_problem, expert_ids),
    FIELD(gg_problem, opts),
    FIELD(gg_problem, n_opts),
    FIELD(gg_problem, mutant),
    STRUCT(gg_operands),
    FIELD(gg_operands, a),
    FIELD(gg_operands, b),
    FIELD(gg_operands, c),
    FIELD(gg_operands, a_scale),
    FIELD(gg_operands, b_scale),
    FIELD(gg_operands, bias),
    FIELD(gg_operands, workspace),
    FIELD(gg_operands, workspace_bytes),
    FIELD(gg_operands, group_lens_dev),
    FIELD(gg_operands, group_offs_dev),
    FIELD(gg_operands, sorted_ids_dev),
    FIELD(gg_operands, expert_ids_dev),
    FIELD(gg_operands, stream),
    STRUCT(gg_kernel),
    FIELD(gg_kernel, abi_version),
    FIELD(gg_kernel, name),
    FIELD(gg_kernel, summary),
    FIELD(gg_kernel, backend),
    FIELD(gg_kernel, ops),
    FIELD(gg_kernel, tile_m),
    FIELD(gg_kernel, tile_n),
    FIELD(gg_kernel, tile_k),
    FIELD(gg_kernel, mutants),
    FIELD(gg_kernel, supports),
    FIELD(gg_kernel, workspace_bytes),
    FIELD(gg_kernel, run),
    STRUCT(gg_plugin_host),
    FIELD(gg_plugin_host, abi_version),
    FIELD(gg_plugin_host, ctx),
    FIELD(gg_plugin_host, add_kernel),
    {NULL, 0},
};

const struct gg_cli_abi_entry *gg_cli_abi_layout(void)
{
    return LAYOUT;
}
