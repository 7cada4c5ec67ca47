"""jax.lax.ragged_dot and ragged_dot_general with a bf16 result (preferred_element_type bf16, what
a call on bf16 operands returns by default) against the same call with an f32 result rounded to
bf16 afterwards. ggfuzz's bound for a bf16-input, f32-accumulation GEMM with a bf16 output is
gamma_r(2^-24) sum|ab| plus the output's rounding, 2^-8 |out| (r: the reduction length). This
prints, per shape, the worst error / bound of both, on one-token groups and on groups of many
rows, for the three ops of the adapter (fwd and wgrad through ragged_dot_general, dgrad through
ragged_dot):

    python3 tests/vendor/repro_jax_ragged_dot_bf16_result.py

A ratio above 1 with the bf16 result and below 1 with the f32 one says that XLA reduces in less
than f32 (or rounds partial sums to bf16) when asked for a bf16 result. lax documents
preferred_element_type as the type results are accumulated to, so this is the documented
contract, not a defect of XLA; but a bf16 call is what a user writes by default, and its error is
not that of an f32-accumulating GEMM. On an H100 with JAX 0.11.2 the bf16 result passes the bound
by 1.8e4 on a wgrad (ragged_dot_general, groups [1, 0, 2, 1], N 1, K 7168), 34 on a wgrad of four
256-row groups and 4.2 on a forward of 16 one-token groups with K 128; the f32 result rounded stays
within it (at most 0.99) everywhere, and dgrad (ragged_dot) is within it both ways. ggfuzz found it
as snr/.../degraded signatures on grouped_bf16_jax_ragged_dot_general; the adapter asks for f32.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

rng = np.random.default_rng(0)


def bf16(x):
    return jnp.asarray(x, jnp.float32).astype(jnp.bfloat16)


def f64(x):
    return np.asarray(jnp.asarray(x, jnp.float32), np.float64)


def worst(out, ref, absab, r):
    u = 2.0 ** -24
    bound = r * u / (1 - r * u) * absab + 2.0 ** -8 * np.abs(out)
    err = np.abs(out - ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(bound > 0, err / bound, np.where(err > 0, np.inf, 0))
    return float(q.max()) if q.size else 0.0


def dims(op):
    if op == "dgrad":
        return None
    if op == "fwd":
        return jax.lax.RaggedDotDimensionNumbers(
            dot_dimension_numbers=(([1], [2]), ([], [])), lhs_ragged_dimensions=[0],
            rhs_group_dimensions=[0])
    return jax.lax.RaggedDotDimensionNumbers(
        dot_dimension_numbers=(([0], [0]), ([], [])), lhs_ragged_dimensions=[0],
        rhs_group_dimensions=[])


def call(op, a, b, g, t):
    if op == "dgrad":
        return jax.lax.ragged_dot(a, b, g, preferred_element_type=t)
    return jax.lax.ragged_dot_general(a, b, g, dims(op), preferred_element_type=t)


def case(op, lens, n, k):
    m = int(sum(lens))
    g = jnp.asarray(np.asarray(lens, np.int32))
    if op == "fwd":      # X [M,K] . W[G,N,K]^T -> [M,N], reduction K
        a, b = bf16(rng.standard_normal((m, k))), bf16(rng.uniform(-1, 1, (len(lens), n, k)))
    elif op == "dgrad":  # dY [M,N] . W[G,N,K] -> [M,K], reduction N
        a, b = bf16(rng.standard_normal((m, n))), bf16(rng.uniform(-1, 1, (len(lens), n, k)))
    else:                # dY [M,N]^T . X [M,K] per group -> [G,N,K], reduction: the group's rows
        a, b = bf16(rng.standard_normal((m, n))), bf16(rng.standard_normal((m, k)))
    A, B = f64(a), f64(b)
    ref = np.zeros((m, n) if op == "fwd" else (m, k) if op != "wgrad" else (len(lens), n, k))
    absab = np.zeros_like(ref)
    r0 = 0
    for i, rows in enumerate(lens):
        sl = slice(r0, r0 + rows)
        if op == "fwd":
            ref[sl] = A[sl] @ B[i].T
            absab[sl] = np.abs(A[sl]) @ np.abs(B[i]).T
        elif op == "dgrad":
            ref[sl] = A[sl] @ B[i]
            absab[sl] = np.abs(A[sl]) @ np.abs(B[i])
        else:
            ref[i] = A[sl].T @ B[sl]
            absab[i] = np.abs(A[sl]).T @ np.abs(B[sl])
        r0 += rows
    r = k if op == "fwd" else n if op == "dgrad" else max(lens)
    got_bf16 = f64(call(op, a, b, g, jnp.bfloat16))
    got_f32 = f64(call(op, a, b, g, jnp.float32).astype(jnp.bfloat16))
    return worst(got_bf16, ref, absab, r), worst(got_f32, ref, absab, r)


print("jax", jax.__version__, jax.devices()[0])
for op in ("fwd", "dgrad", "wgrad"):
    for lens, n, k in [([1] * 8, 1, 4096), ([1] * 8, 64, 4096), ([1, 0, 2, 1], 1, 7168),
                       ([1] * 16, 1, 128), ([64, 128, 0, 32], 256, 2048),
                       ([256] * 4, 1, 4096)]:
        qb, qf = case(op, lens, n, k)
        label = str(lens) if len(lens) <= 4 else "[%d]*%d" % (lens[0], len(lens))
        print("%-5s lens %-16s N %-4d K %-5d  worst err/bound: bf16 result %8.3g   "
              "f32 result rounded %8.3g" % (op, label, n, k, qb, qf))
