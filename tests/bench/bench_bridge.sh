#!/bin/sh
# bench_bridge.sh — the Python bridge's cost per case: tiny-shape cases per second of one process
# (what one campaign worker gives) for a Python kernel against a native kernel, on the same cases
# and the same path (`ggfuzz run --no-fork`: materialise, three runs under two workspace poisons,
# guards, input hashes, reference, oracles, verdict). The cases are drawn here: grouped bf16
# fwd, dgrad and wgrad, 1 to 8 groups of 0 to 128 rows, N and K multiples of 8 up to 128 (what
# torch._grouped_mm takes; wgrad groups but the last a multiple of 8 rows). The rate is the cases
# run over the sum of their own times (`run --json`: each case from its admission to its
# verdict), so the start-up of the process (the interpreter, torch, the CUDA context) is left
# out; the whole command's wall time is printed beside it.
#
#   sh tests/bench/bench_bridge.sh [BUILD] [CASES] [NATIVE] [PLUGIN.py:PYKERNEL]
#
# Defaults: BUILD build-cuda, 400 cases, grouped_bf16_cuda_persistent against
# kernels/python/adapters/torch_grouped_mm.py:grouped_bf16_torch_grouped_mm.
set -eu
build=${1:-build-cuda}
cases=${2:-400}
native=${3:-grouped_bf16_cuda_persistent}
py=${4:-kernels/python/adapters/torch_grouped_mm.py:grouped_bf16_torch_grouped_mm}
plugin=${py%:*}
pykernel=${py##*:}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/all"
awk -v n="$cases" -v dir="$dir" -v kernel="$native" 'BEGIN {
    srand(7);
    split("fwd dgrad wgrad", ops, " ");
    for (i = 0; i < n; i++) {
        op = ops[i % 3 + 1];
        g = 1 + int(rand() * 8);
        lens = "";
        for (j = 0; j < g; j++) {
            len = int(rand() * 129);
            if (op == "wgrad" && j < g - 1)
                len = 8 * int(len / 8);
            lens = lens " " len;
        }
        f = sprintf("%s/all/case-%04d.case", dir, i);
        printf "ggfuzz-case 1\nop grouped_%s\nkernel %s\ndtypes a=bf16 b=bf16 c=bf16 acc=f32\n", op, kernel > f;
        printf "scaling none\ngroups %d\ngroup_lens%s\nn %d\nk %d\n", g, lens, 8 * (1 + int(rand() * 16)), 8 * (1 + int(rand() * 16)) > f;
        printf "data a=normal(0,1) b=normal(0,1)\nseed %d\n", i + 1 > f;
        close(f);
    }
}'

now() { date +%s.%N; }

# measure NAME ARGS...: `ggfuzz ARGS DIR --json` on the cases; prints the summary line, the
# cases per second of the cases' own times and the command's wall time.
measure() {
    name=$1
    shift
    t0=$(now)
    "$build/ggfuzz" "$@" --json "$dir/$name.json" "$dir/all" > "$dir/$name.all" 2>&1 || true
    t1=$(now)
    ran=$(tail -n 1 "$dir/$name.all" | awk '{print $3 + $5}')
    busy=$(grep -o '"seconds": *[0-9.eE+-]*' "$dir/$name.json" | awk -F: '{s += $2} END {print s}')
    rate=$(awk -v n="$ran" -v b="$busy" 'BEGIN {print (b > 0 ? n / b : 0)}')
    printf '%-36s %s\n' "$name" "$(tail -n 1 "$dir/$name.all")"
    printf '%-36s %.1f cases/s (%.3f ms a case); the command took %.2f s\n' "" "$rate" \
        "$(awk -v r="$rate" 'BEGIN {print (r > 0 ? 1000 / r : 0)}')" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
    echo "$rate" > "$dir/$name.rate"
}

measure "$native" run --no-fork --kernel "$native"
measure "$pykernel" --plugin "$plugin" run --no-fork --kernel "$pykernel"
awk -v p="$(cat "$dir/$pykernel.rate")" -v n="$(cat "$dir/$native.rate")" \
    'BEGIN {printf "bridge / native: %.2f\n", (n > 0 ? p / n : 0)}'
grep -h "^ERROR\|^FAIL" "$dir/$native.all" "$dir/$pykernel.all" | head -n 20 || true
