"""jax.lax.ragged_dot on a GPU: a NaN or Inf in one group's operands reaches the outputs of other
groups.

out[r] = lhs[r] . rhs[g(r)] must depend only on row r and the weights of its own group g(r).
ggfuzz found NaN outputs where the exact result is finite on grouped_bf16_jax_ragged_dot and
grouped_bf16_jax_ragged_dot_general (signatures nan/.../scattered/nan) with inputs holding
planted special values; this script reproduces it without ggfuzz:

    python3 tests/vendor/repro_jax_ragged_dot_nan_crosstalk.py

It prints, for a NaN in the weights of group 1 and for an Inf in a row of group 1, whether the
outputs of group 0 stay finite, and exits 1 when they do not.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

m, k, n = 8, 64, 32
sizes = jnp.array([4, 4], dtype=jnp.int32)  # rows 0-3: group 0, rows 4-7: group 1
rng = np.random.default_rng(0)
lhs = rng.standard_normal((m, k)).astype(np.float32)
rhs = rng.standard_normal((2, k, n)).astype(np.float32)
f = jax.jit(lambda a, b, s: jax.lax.ragged_dot(a, b, s, preferred_element_type=jnp.float32))
bad = 0
for name, (a, b) in {
    "NaN in the weights of group 1": (lhs, np.where(np.arange(k)[None, :, None] == 3,
                                                    np.where(np.arange(2)[:, None, None] == 1,
                                                             np.nan, rhs), rhs)),
    "Inf in row 5 (group 1)": (np.where(np.arange(m)[:, None] == 5, np.inf, lhs), rhs),
}.items():
    out = np.asarray(f(jnp.asarray(a, jnp.bfloat16), jnp.asarray(b, jnp.bfloat16), sizes),
                     dtype=np.float64)
    ok = np.isfinite(out[:4]).all()
    bad += not ok
    print("%-32s group 0 outputs %s (%d of %d non-finite)" % (
        name, "finite: ok" if ok else "NOT finite: BUG", (~np.isfinite(out[:4])).sum(), 4 * n))
print("jax", jax.__version__, jax.devices()[0].device_kind)
raise SystemExit(1 if bad else 0)
