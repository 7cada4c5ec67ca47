#!/bin/sh
# The Python adapters and the Triton example on a GPU machine: runs each adapter kernel over the
# seeds, the quick suite and tests/vendor/adapter_cases (the cases the adapters take that those
# lack), then the Triton example with each of its mutants over the seeds and the mutant corpus,
# and prints one line per kernel: how many cases passed, were refused, failed or could not run.
# Each run's full output goes to OUT/<kernel>[+<mutant>].log.
#
# Usage: sh tests/vendor/adapters_smoke.sh [--out DIR] [--only REGEX]
#   --only          run only the kernels whose name matches the extended regular expression
#   GGFUZZ          the ggfuzz of a CUDA build (default build-cuda/ggfuzz)
#   GGFUZZ_PYTHON   the Python with torch, Triton and JAX (default python3 on PATH)
#   SMOKE_TIMEOUT   seconds a case may take (default 900: inductor compiles and autotunes on the
#                   first case of each run)
#   SMOKE_FORK      1: each case in a child process of its own (a crash is a verdict, but every
#                   case pays the framework's start and inductor compiles again); default 0: all
#                   cases of a kernel in one process (`run --no-fork`), as a campaign worker
#                   runs them
# Exit code 0 when no correct kernel failed or could not run and every mutant was found.
set -u
cd "$(dirname "$0")/../.."
out=adapters-smoke
only=.
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --only) only=$2; shift ;;
    *) echo "usage: sh tests/vendor/adapters_smoke.sh [--out DIR] [--only REGEX]" >&2; exit 2 ;;
  esac
  shift
done
GGFUZZ=${GGFUZZ:-build-cuda/ggfuzz}
timeout=${SMOKE_TIMEOUT:-900}
isolation=--no-fork
[ "${SMOKE_FORK:-0}" = 1 ] && isolation=
[ -x "$GGFUZZ" ] || { echo "adapters_smoke: $GGFUZZ is not an executable ggfuzz (set GGFUZZ)" >&2; exit 3; }
mkdir -p "$out" || exit 3
A=kernels/python/adapters
EX=kernels/python/examples/triton_grouped.py
status=0

# The counts of a run's summary line ("N cases: P passed, F failed, R refused, E errors").
counts() {
  sed -n 's/^\([0-9]*\) cases: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) refused, \([0-9]*\) errors.*/\1 \2 \3 \4 \5/p' "$1" | tail -1
}

# run_kernel PLUGIN KERNEL [MUTANT]: one run over the corpora, one line of counts.
run_kernel() {
  plugin=$1 kernel=$2 mutant=${3:-}
  echo "$kernel" | grep -Eq "$only" || return 0
  if [ -n "$mutant" ]; then
    log="$out/$kernel+$mutant.log"
    "$GGFUZZ" --plugin "$plugin" run $isolation --timeout "$timeout" --kernel "$kernel" --mutant "$mutant" \
      corpus/seeds corpus/mutants > "$log" 2>&1
  else
    log="$out/$kernel.log"
    "$GGFUZZ" --plugin "$plugin" run $isolation --timeout "$timeout" --kernel "$kernel" \
      corpus/seeds corpus/suite/quick tests/vendor/adapter_cases > "$log" 2>&1
  fi
  rc=$?
  set -- $(counts "$log")
  if [ $# -ne 5 ]; then
    printf '%-50s no summary (exit %d), see %s\n' "$kernel${mutant:+ +$mutant}" "$rc" "$log"
    status=1
    return
  fi
  verdict=ok
  if [ -n "$mutant" ]; then
    [ "$3" -gt 0 ] && verdict="found" || { verdict="NOT FOUND"; status=1; }
  elif [ "$3" -gt 0 ] || [ "$5" -gt 0 ]; then
    verdict="FAILURES"; status=1
  elif [ "$2" -eq 0 ]; then
    verdict="nothing ran"; status=1
  fi
  printf '%-50s %4d pass %4d refused %4d fail %4d error  %s\n' \
    "$kernel${mutant:+ +$mutant}" "$2" "$4" "$3" "$5" "$verdict"
}

run_kernel $A/torch_scaled_grouped_mm.py grouped_fp8_torch_scaled_grouped_mm
for k in tensorwise rowwise blockwise; do
  run_kernel $A/torch_scaled_mm.py dense_fp8_torch_scaled_mm_$k
done
run_kernel $A/torch_grouped_mm.py grouped_bf16_torch_grouped_mm
run_kernel $A/torch_bmm.py batched_bf16_torch_bmm
run_kernel $A/inductor_grouped_mm.py grouped_bf16_inductor_triton
run_kernel $A/jax_ragged_dot.py grouped_bf16_jax_ragged_dot
run_kernel $A/jax_ragged_dot.py grouped_bf16_jax_ragged_dot_general
run_kernel $EX grouped_bf16_triton_example
for m in no_k_mask group_end_off_by_one; do
  run_kernel $EX grouped_bf16_triton_example $m
done
exit $status
