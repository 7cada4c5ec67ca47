"""The Triton grouped GEMM that torch.compile(..., mode="max-autotune") generates for
torch._grouped_mm, as a ggfuzz kernel (grouped_bf16_inductor_triton): inductor's persistent
template torch/_inductor/kernel/templates/triton_mm_grouped.py.jinja (TMA loads on an H100),
lowered by torch/_inductor/kernel/mm_grouped.py, for fwd (2D x 3D, W as W.transpose(-2, -1)),
dgrad (2D x 3D) and wgrad (2D x 2D, ragged K, masked along K by the template).

The mode is "max-autotune-no-cudagraphs": the same lowering and autotuning as "max-autotune"
(inductor's max_autotune), without CUDA graphs, which would copy every input into a static
buffer of their own and record a graph per shape, so that the kernel would no longer read the
harness's buffers.

How the template is made sure of: the wrapper is compiled with fullgraph=True (no graph break
can hand the op back to eager) and max_autotune_gemm_backends = "TRITON", so the aten kernel is
not among the autotuning choices (use_aten_gemm_kernels() is false): the lowering either picks
a Triton template config or fails with NoValidChoicesError, which is a kernel error, never a
silent fall-back. The first call also checks that inductor did lower aten._grouped_mm
(counters["aten_mm_info"]) or loaded a graph compiled so from its cache.

Built for campaigns: one compiled callable per worker process, dynamic=True, so that a new
shape reuses the compiled graph instead of autotuning again (mm_grouped.py still takes the
template under symbolic sizes: early_config_prune skips its M-based pruning, and is_nonzero is
true for sizes not known to be 0); a new stride pattern or a size of 0 or 1 (which dynamo
specialises) compiles once more. The recompile limit is raised and a hit of it is an error
(fail_on_recompile_limit_hit), never a fall-back to eager. Inductor's caches
($TORCHINDUCTOR_CACHE_DIR) carry compiled kernels across processes, but the first case of each
fresh worker still compiles and autotunes: give campaigns `--timeout 900`. Operands are views;
the result is copied into the harness's output.

supports() refuses what the op's checks refuse (as for grouped_bf16_torch_grouped_mm: bf16
inputs and output, no scaling or bias, int32 offsets and sizes, 16-byte strides and bases:
_meta_grouped_mm_common in torch/_meta_registrations.py, which the compiled graph is traced
with) and what the template needs: an output with no zero dimension (mm_grouped.py,
_tuned_grouped_mm_common: the template is a choice only when is_nonzero; a size of 0 is static
under dynamo, so it would leave no choice). Unlike aten's CUTLASS kernel the template masks a
ragged K, so wgrad groups of any size are taken, and a wgrad whose every group is empty (total
K of 0, which aten refuses, pytorch#192497) is passed to it.

    ggfuzz --plugin kernels/python/adapters/inductor_grouped_mm.py fuzz --timeout 900 \\
        --kernel grouped_bf16_inductor_triton
"""

import ggfuzz

INT32_MAX = 2**31 - 1
RECOMPILE_LIMIT = 4096
_state = {}


def supports(p):
    if (p.a_dtype, p.b_dtype, p.c_dtype, p.acc_dtype) != ("bf16", "bf16", "bf16", "f32"):
        return "bf16 inputs and output, f32 accumulation (a=%s b=%s c=%s)" % (
            p.a_dtype, p.b_dtype, p.c_dtype)
    if p.scaling != "none" or p.bias_dtype != "none":
        return "no scaling, no bias"
    if max(p.m, p.n, p.k) > INT32_MAX:
        return "sizes and offsets are int32"
    strides = [p.lda, p.ldb, p.n, p.k] + ([p.stride_c] if p.op == "grouped_wgrad"
                                          else [p.stride_b])
    if any(int(s) % 8 for s in strides):
        return "N, K, the leading dimensions and the expert stride must be multiples of 8 bf16"
    out = {"grouped_fwd": (p.m, p.n), "grouped_dgrad": (p.m, p.k),
           "grouped_wgrad": (p.groups, p.n, p.k)}[p.op]
    if 0 in out:
        return "the template is not a choice for an empty output %s" % (out,)
    return None


def _grouped(a, b, offs):
    import torch
    return torch._grouped_mm(a, b, offs=offs)


def _compiled():
    """The compiled wrapper of this process, with inductor set to autotune Triton only."""
    fn = _state.get("fn")
    if fn is None:
        import torch
        import torch._dynamo.config as dynamo_config
        import torch._inductor.config as inductor_config
        inductor_config.max_autotune_gemm_backends = "TRITON"
        for key in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                    "accumulated_cache_size_limit"):
            if hasattr(dynamo_config, key):
                setattr(dynamo_config, key, RECOMPILE_LIMIT)
        if hasattr(dynamo_config, "fail_on_recompile_limit_hit"):
            dynamo_config.fail_on_recompile_limit_hit = True
        fn = torch.compile(_grouped, mode="max-autotune-no-cudagraphs", dynamic=True,
                           fullgraph=True)
        _state["fn"] = fn
    return fn


def run(p, o):
    import torch
    from torch._dynamo.utils import counters
    for name, t in (("A", o.a), ("B", o.b)):
        if t.numel() and t.data_ptr() % 16:
            raise RuntimeError("%s is not 16-byte aligned" % name)
    offs = torch.tensor(p.group_offs[1:].astype("int32"), device=o.a.device)
    if p.op == "grouped_fwd":
        a, b = o.a, o.b.transpose(-2, -1)
    elif p.op == "grouped_dgrad":
        a, b = o.a, o.b
    else:
        a, b = o.a.t(), o.b
    out = _compiled()(a, b, offs)
    if not _state.get("lowered"):
        # Lowered here, or loaded from inductor's cache of a graph compiled with these settings.
        if not (counters["aten_mm_info"].get("aten._grouped_mm.default")
                or counters["inductor"].get("fxgraph_cache_hit")
                or counters["aot_autograd"].get("autograd_cache_hit")):
            raise RuntimeError("inductor did not lower aten._grouped_mm: no Triton template ran")
        _state["lowered"] = True
    o.c.copy_(out)


ggfuzz.register(ggfuzz.Kernel(
    name="grouped_bf16_inductor_triton",
    ops=("grouped_fwd", "grouped_dgrad", "grouped_wgrad"), backend="cuda",
    summary="torch.compile(torch._grouped_mm, mode=max-autotune): inductor's Triton template",
    supports=supports, run=run))
