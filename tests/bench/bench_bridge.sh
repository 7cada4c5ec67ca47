#!/bin/sh
# bench_bridge.sh — the Python bridge's cost per case: tiny-shape cases per second of one process
# (what one campaign worker gives) for a Python kernel against a native kernel, on the same cases
# and the same path (`ggfuzz run --no-fork`: materialise, three runs under two workspace poisons,
# guards, input hashes, reference, oracles, verdict). bench_fuzz_throughput draws the tiny cases
# (every size <= 128, at most 8 groups) for the native kernel; each command runs them once and
# once on the first case alone, and the difference gives the rate without the start-up (the
# interpreter, torch and the CUDA context), which is printed apart.
#
#   sh tests/bench/bench_bridge.sh [BUILD] [CASES] [NATIVE] [PLUGIN.py:PYKERNEL]
#
# Defaults: BUILD build-cuda, 300 cases, grouped_bf16_cuda_persistent against
# kernels/python/adapters/torch_grouped_mm.py:grouped_bf16_torch_grouped_mm.
set -eu
build=${1:-build-cuda}
cases=${2:-300}
native=${3:-grouped_bf16_cuda_persistent}
py=${4:-kernels/python/adapters/torch_grouped_mm.py:grouped_bf16_torch_grouped_mm}
plugin=${py%:*}
pykernel=${py##*:}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/all" "$dir/one"
"$build/tests/bench_fuzz_throughput" --cases "$cases" --write "$dir/all" "$native"
cp "$(ls "$dir"/all/*.case | head -n 1)" "$dir/one/"

now() { date +%s.%N; }

# measure NAME ARGS...: seconds of `ggfuzz ARGS run --no-fork ... DIR` on all cases and on one;
# prints the summary line and sets ran (cases run, refusals excluded), t_all and t_one.
measure() {
    name=$1
    shift
    t0=$(now)
    "$build/ggfuzz" "$@" "$dir/one" > "$dir/$name.one" 2>&1 || true
    t1=$(now)
    "$build/ggfuzz" "$@" "$dir/all" > "$dir/$name.all" 2>&1 || true
    t2=$(now)
    summary=$(tail -n 1 "$dir/$name.all")
    ran=$(echo "$summary" | awk '{print $3 + $5}')
    t_one=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
    t_all=$(awk -v a="$t1" -v b="$t2" 'BEGIN {print b - a}')
    rate=$(awk -v n="$ran" -v a="$t_all" -v o="$t_one" 'BEGIN {print a > o ? (n - 1) / (a - o) : 0}')
    printf '%-36s %s\n' "$name" "$summary"
    printf '%-36s start-up %.2f s, %d cases in %.2f s: %.1f cases/s after start-up\n' "" \
        "$t_one" "$ran" "$t_all" "$rate"
    echo "$rate" > "$dir/$name.rate"
}

measure "$native" run --no-fork --kernel "$native"
measure "$pykernel" --plugin "$plugin" run --no-fork --kernel "$pykernel"
awk -v p="$(cat "$dir/$pykernel.rate")" -v n="$(cat "$dir/$native.rate")" \
    'BEGIN {printf "bridge / native: %.2f\n", n > 0 ? p / n : 0}'
grep -h "^ERROR\|^FAIL" "$dir/$native.all" "$dir/$pykernel.all" | head -n 20 || true
