"""jax.lax.ragged_dot and jax.lax.ragged_dot_general as ggfuzz kernels: JAX's grouped GEMM (XLA on
an H100), bf16 inputs, bf16 or f32 output (preferred_element_type):

  grouped_bf16_jax_ragged_dot          dgrad: ragged_dot(dY [M,N], W [G,N,K], group_lens), W
                                       being ragged_dot's [g, k, n] operand as stored
  grouped_bf16_jax_ragged_dot_general  fwd: ragged_dot_general(X [M,K], W [G,N,K], group_lens)
                                       with the ragged dimension non-contracting (mode 1 of its
                                       docstring): dimension numbers (([1], [2]), ([], [])),
                                       lhs_ragged_dimensions [0], rhs_group_dimensions [0]
                                       wgrad: ragged_dot_general(dY [M,N], X [M,K], group_lens)
                                       with the ragged dimension contracting (mode 2): (([0],
                                       [0]), ([], [])), lhs_ragged_dimensions [0], no rhs group
                                       dimension, output [G, N, K]

Why fwd goes through ragged_dot_general: ragged_dot wants W^T [G,K,N]; the view
W.transpose(1, 2) passes XLA's DLPack import (a transposition is a compact layout), but arrives
as an array with a non-default layout, which jit would relayout (a copy inside XLA) or refuse,
depending on the version; contracting W's last dimension directly needs neither.

Operands reach JAX through DLPack from the torch views of the harness's buffers, without a
copy. XLA's DLPack import takes only compact strides, a permutation of a dense array ("Only
DLPack tensors with trivial (compact) striding are supported", StridesToLayout in
xla/python/dlpack_strides.cc), so supports() refuses padded leading dimensions or expert
strides instead of copying the operand.
The group sizes go to the device as int32 (JAX runs without x64). An empty operand is made by
JAX (jnp.zeros) rather than imported.

The product is asked for in f32 (preferred_element_type=float32) and rounded to the output type
inside the same jit: lax's preferred_element_type is the type results are accumulated to, and with
bf16 XLA reduces some ragged_dot_general shapes in less than f32 (errors up to 1.8e4 times the
f32-accumulation bound on a wgrad of groups [1, 0, 2, 1], N 1, K 7168, where the f32 result
rounded to bf16 stays within it: tests/vendor/repro_jax_ragged_dot_bf16_result.py). A bf16-output
grouped GEMM with f32 accumulation, the contract ggfuzz checks, is therefore the f32 call rounded,
as a JAX user who needs f32 accumulation must write it.

JAX runs on its own stream: the harness's stream (torch's current one) is synchronised before
JAX reads the operands, and JAX's result is waited for (block_until_ready) before it is copied,
through DLPack, into the harness's output on the harness's stream. JAX must not take the GPU's
memory at start-up: XLA_PYTHON_CLIENT_PREALLOCATE is set to false (unless already set) before
JAX is imported. Each new shape is a new jit compilation (fast next to inductor's).

    ggfuzz --plugin kernels/python/adapters/jax_ragged_dot.py fuzz \\
        --kernel grouped_bf16_jax_ragged_dot
"""

import os

import ggfuzz

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

_jit = {}


def _compact(shape, strides):
    """Whether strides are a permutation of a dense layout of shape (XLA's DLPack rule)."""
    if 0 in shape:
        return True   # an empty operand is made by JAX, not imported
    want = 1
    for size, stride in sorted(zip(shape, strides), key=lambda d: d[1]):
        if size > 1 and stride != want:
            return False
        want *= size
    return True


def _supports(p, ops):
    if p.op not in ops:
        return "ops %s only" % "/".join(ops)
    if (p.a_dtype, p.b_dtype, p.acc_dtype) != ("bf16", "bf16", "f32"):
        return "bf16 inputs, f32 accumulation (a=%s b=%s)" % (p.a_dtype, p.b_dtype)
    if p.c_dtype not in ("bf16", "f32") or p.scaling != "none" or p.bias_dtype != "none":
        return "bf16 or f32 output, no scaling, no bias"
    for name, (shape, strides) in sorted(p.shapes().items()):
        if name in "ab" and not _compact(shape, strides):
            return "operand %s %s with strides %s is not compact: XLA's DLPack import " \
                   "takes only dense layouts" % (name.upper(), shape, strides)
    return None


def _functions():
    """The jitted calls, made once per process."""
    if not _jit:
        import jax
        import jax.numpy as jnp
        dims = {"grouped_fwd": ((([1], [2]), ([], [])), [0], [0]),
                "grouped_wgrad": ((([0], [0]), ([], [])), [0], [])}
        for op, (dot_dims, ragged, group) in dims.items():
            rd = jax.lax.RaggedDotDimensionNumbers(
                dot_dimension_numbers=dot_dims, lhs_ragged_dimensions=ragged,
                rhs_group_dimensions=group)
            _jit[op] = jax.jit(lambda a, b, g, t, rd=rd: jax.lax.ragged_dot_general(
                a, b, g, rd, preferred_element_type=jnp.float32).astype(t), static_argnums=3)
        _jit["grouped_dgrad"] = jax.jit(lambda a, b, g, t: jax.lax.ragged_dot(
            a, b, g, preferred_element_type=jnp.float32).astype(t), static_argnums=3)
    return _jit


def _to_jax(t):
    import jax
    import jax.numpy as jnp
    if t.numel() == 0:
        return jnp.zeros(tuple(t.shape), jnp.bfloat16)
    return jax.dlpack.from_dlpack(t)


def run(p, o):
    import jax.numpy as jnp
    import numpy as np
    import torch
    out_type = jnp.float32 if p.c_dtype == "f32" else jnp.bfloat16
    torch.cuda.current_stream().synchronize()
    sizes = jnp.asarray(np.asarray(p.group_lens, dtype=np.int32))
    res = _functions()[p.op](_to_jax(o.a), _to_jax(o.b), sizes, out_type)
    res.block_until_ready()
    if o.c.numel():
        o.c.copy_(torch.from_dlpack(res))


ggfuzz.register(
    ggfuzz.Kernel(
        name="grouped_bf16_jax_ragged_dot", ops=("grouped_dgrad",), backend="cuda",
        summary="jax.lax.ragged_dot (bf16; dgrad: dY [M,N] x W [G,N,K])",
        supports=lambda p: _supports(p, ("grouped_dgrad",)), run=run),
    ggfuzz.Kernel(
        name="grouped_bf16_jax_ragged_dot_general", ops=("grouped_fwd", "grouped_wgrad"),
        backend="cuda",
        summary="jax.lax.ragged_dot_general (bf16; fwd contracting W's K, wgrad ragged K)",
        supports=lambda p: _supports(p, ("grouped_fwd", "grouped_wgrad")), run=run))
