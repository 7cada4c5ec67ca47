#!/bin/sh
# The campaign and the release gate spread over the GPUs of one machine against one GPU, in one
# run: a campaign on a correct kernel for SECONDS on GPU 0 alone (--gpus 0), then on every GPU
# (--gpus all), with cases per second per GPU against the one-GPU run (target: at least 90% on
# each); a mutant's campaign on one GPU and on all (found on each); the release tier's Qwen3 EP8
# bf16 cases (18) as a suite on one GPU and on all, wall time and whether the results are equal
# apart from timings. Prints one line per run; the campaigns' logs and fuzzer_stats, and the
# suites' results, stay in OUT.
# Usage: sh tests/bench/bench_gpus.sh [BUILD_DIR] [SECONDS] [OUT]   (default build-cuda 270 bench-gpus)
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${1:-build-cuda} seconds=${2:-270} out=${3:-bench-gpus}
G=$(cd "$build" && pwd)/ggfuzz
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
stat() { sed -n "s/^$2 *: //p" "$1/ggfuzz-out/fuzzer_stats"; }
campaign() { # NAME SECONDS ARGS...
  name=$1 t=$2
  shift 2
  rm -rf "$out/$name" && mkdir -p "$out/$name"
  (cd "$out/$name" && timeout $((t + 60)) "$G" fuzz --max-total-time "$t" --seed 7 "$@" > log 2>&1)
  echo "$name: exit $?, $(stat "$out/$name" execs_done) cases in $(stat "$out/$name" run_time) s,"\
       "$(stat "$out/$name" execs_per_sec)/s, $(stat "$out/$name" faults_new) new signatures"
  grep '^stat::gpu' "$out/$name/log"
}
per_gpu() { # NAME: each GPU's rate against one_rate
  for id in $(stat "$out/$1" gpus | tr ',' ' '); do
    r=$(stat "$out/$1" "gpu${id}_execs_per_sec")
    echo "  GPU $id: $r/s, $(echo "$r $one_rate" | awk '{printf "%.0f", 100 * $1 / $2}')% of one GPU's"
  done
}
nvidia-smi -L
campaign correct_one "$seconds" --kernel grouped_bf16_cuda_persistent --gpus 0
one_rate=$(stat "$out/correct_one" execs_per_sec)
campaign correct_all "$seconds" --kernel grouped_bf16_cuda_persistent --gpus all
per_gpu correct_all
mutant_s=$((seconds / 3))
campaign mutant_one "$mutant_s" --kernel grouped_fp8_cuda_tiled --mutant fnuz_as_ocp --gpus 0
one_rate=$(stat "$out/mutant_one" execs_per_sec)
campaign mutant_all "$mutant_s" --kernel grouped_fp8_cuda_tiled --mutant fnuz_as_ocp --gpus all
per_gpu mutant_all
cases=$(ls corpus/suite/release/qwen3_ep8_*_bf16.case)
for g in 0 all; do
  t0=$(date +%s)
  "$G" suite $cases --tier release --kernel grouped_bf16_cuda_persistent --gpus $g --gate \
    --json "$out/suite_$g.json" --junit "$out/suite_$g.xml" > "$out/suite_$g.txt" 2>&1
  echo "suite --gpus $g: exit $?, $(($(date +%s) - t0)) s: $(grep '^suite release' "$out/suite_$g.txt")"
done
python3 tests/slurm/suite_equal.py "$out/suite_0.json" "$out/suite_all.json" \
  "$out/suite_0.xml" "$out/suite_all.xml"
