#!/bin/sh
# bench_bridge.sh — the Python bridge's cost per case: tiny-shape cases per second of one process
# (what one campaign worker gives) for a Python kernel against a native kernel, on the same cases
# and the same path (`ggfuzz run --no-fork`: materialise, three runs under two workspace poisons,
# guards, input hashes, reference, oracles, verdict). The cases are drawn here: grouped bf16
# fwd, dgrad and wgrad, 1 to 8 groups of 0 to 128 rows, N and K multiples of 8 up to 128 (what
# torch._grouped_mm takes; wgrad groups but the last a multiple of 8 rows). The rate is the cases
# run over the sum of their own times (`run --json`: each case from its admission to its
# verdict), the first case left out: the start-up of the process (the interpreter, the CUDA
# context) and the framework's first import, which a kernel's first run does, are what a campaign
# worker pays once in its life. The first case's time, the whole command's wall time and where a
# case's time went (its phases: setup, inputs, runs, reference, compare) are printed beside it.
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
# cases per second of the cases' own times in the steady state (every case but the first, whose
# run imports the framework: torch's first import alone takes seconds), the first case's time,
# the command's wall time and where a case's time went.
measure() {
    name=$1
    shift
    t0=$(now)
    "$build/ggfuzz" "$@" --json "$dir/$name.json" "$dir/all" > "$dir/$name.all" 2>&1 || true
    t1=$(now)
    printf '%-36s %s\n' "$name" "$(tail -n 1 "$dir/$name.all")"
    python3 - "$dir/$name.json" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
        "$dir/$name.rate" <<'PY' || echo 0 > "$dir/$name.rate"
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
steady = cases[1:]
busy = sum(c["seconds"] for c in steady)
rate = len(steady) / busy if busy > 0 else 0.0
print("%-36s %.1f cases/s (%.3f ms a case) after the first case (%.2f s); the command took "
      "%.2f s" % ("", rate, 1e3 / rate if rate else 0, cases[0]["seconds"] if cases else 0,
                  float(sys.argv[2])))
tot = {}
for c in steady:
    for k, v in (c.get("phase_seconds") or {}).items():
        tot[k] = tot.get(k, 0.0) + v
n = max(len(steady), 1)
print("%-36s a case: %s" % ("", ", ".join("%s %.2f ms" % (k, 1e3 * v / n) for k, v in tot.items())))
open(sys.argv[3], "w").write("%g\n" % rate)
PY
}

measure "$native" run --no-fork --kernel "$native"
measure "$pykernel" --plugin "$plugin" run --no-fork --kernel "$pykernel"
awk -v p="$(cat "$dir/$pykernel.rate")" -v n="$(cat "$dir/$native.rate")" \
    'BEGIN {printf "bridge / native: %.2f\n", (n > 0 ? p / n : 0)}'
grep -h "^ERROR\|^FAIL" "$dir/$native.all" "$dir/$pykernel.all" | head -n 20 || true
