#!/bin/sh
# A campaign's rate on one device, in one run: for each worker count of WORKERS, a campaign of
# KERNEL (seed 7) for SECONDS, and one line with its cases per second, a case's mean time in a
# worker and, of it, the device buffers and their release (fuzzer_stats' case_ms_*), the GPU's
# busy fraction as the campaign estimates it and as `nvidia-smi` samples it (every 200 ms over the
# campaign, where the command is there). With --flood MUTANT each worker count runs twice, with
# `--no-minimize` and with the minimisers at work, and the line gives the share of the rate the
# workers keep beside the minimisers (what a flooding mutant's triage costs the campaign).
# Extra arguments after `--` go to every campaign (a plugin comes before the command: use
# GGFUZZ_PLUGINS=PATH). The campaigns' logs and fuzzer_stats stay in OUT.
# Usage: sh tests/bench/bench_campaign_rate.sh [--flood MUTANT] BUILD_DIR KERNEL SECONDS
#          "WORKERS..." [OUT] [-- ARGS...]
# e.g.   sh tests/bench/bench_campaign_rate.sh build-cuda grouped_bf16_cuda_persistent 60 "1 4 8"
#        sh tests/bench/bench_campaign_rate.sh --flood fnuz_as_ocp build-cuda \
#          grouped_fp8_cuda_tiled 20 "1 4"
set -u
usage() {
  echo "usage: sh tests/bench/bench_campaign_rate.sh [--flood MUTANT] BUILD_DIR KERNEL SECONDS" \
    "\"WORKERS...\" [OUT] [-- ARGS...]" >&2
  exit 2
}
flood=
if [ "${1:-}" = --flood ]; then
  [ $# -ge 2 ] || usage
  flood=$2
  shift 2
fi
[ $# -ge 4 ] || usage
build=$1 kernel=$2 seconds=$3 workers=$4
shift 4
out=bench-campaign-rate
if [ $# -gt 0 ] && [ "$1" != -- ]; then
  out=$1
  shift
fi
[ "${1:-}" = -- ] && shift
case $seconds in '' | *[!0-9]*) echo "SECONDS must be a whole number: $seconds" >&2; exit 2 ;; esac
for w in $workers; do
  case $w in '' | *[!0-9]* | 0) echo "WORKERS must be whole numbers > 0: $w" >&2; exit 2 ;; esac
done
G=$(cd "$build" 2>/dev/null && pwd)/ggfuzz
[ -x "$G" ] || { echo "no ggfuzz in $build" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
smi=
command -v nvidia-smi > /dev/null 2>&1 && smi=1

stat() { sed -n "s/^$2 *: //p" "$1/ggfuzz-out/fuzzer_stats"; }

# run NAME ARGS...: one campaign in OUT/NAME, nvidia-smi sampled beside it; sets util.
run() {
  name=$1
  shift
  rm -rf "${out:?}/$name" && mkdir -p "$out/$name"
  pid=
  if [ -n "$smi" ]; then
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 \
      > "$out/$name/smi" 2>/dev/null &
    pid=$!
  fi
  (cd "$out/$name" && timeout $((seconds + 120)) "$G" fuzz --kernel "$kernel" \
    --max-total-time "$seconds" --seed 7 "$@" > log 2>&1)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  util=n/a
  [ -s "$out/$name/smi" ] &&
    util=$(awk '{s += $1; n++} END {printf "%.0f%%", s / n}' "$out/$name/smi")
  [ -f "$out/$name/ggfuzz-out/fuzzer_stats" ] || { echo "$name: no fuzzer_stats (see $out/$name/log)"; return 1; }
}

line() { # NAME: the rate and where a case's time went
  d=$out/$1
  dev=$(stat "$d" case_ms_device_buffers) busy=$(stat "$d" gpu_busy_estimate)
  echo "$(stat "$d" execs_done) cases, $(stat "$d" execs_per_sec)/s; a case $(stat "$d" case_ms_worker) ms" \
    "(${dev:+device buffers $dev + }release $(stat "$d" case_ms_release))${busy:+; GPU busy:" \
    "estimate $busy, nvidia-smi $util}"
}

echo "$kernel${flood:+ + $flood}, $seconds s, seed 7, $(cd "$build" && pwd)"
for w in $workers; do
  if [ -z "$flood" ]; then
    run "w$w" --workers "$w" "$@" && echo "workers $w: $(line "w$w")"
    continue
  fi
  run "w${w}_nomin" --workers "$w" --mutant "$flood" --no-minimize "$@" || continue
  without=$(stat "$out/w${w}_nomin" execs_done)
  run "w${w}_min" --workers "$w" --mutant "$flood" "$@" || continue
  with=$(stat "$out/w${w}_min" execs_done)
  echo "workers $w: $without cases without minimisers, $with with them" \
    "($(awk -v a="$with" -v b="$without" 'BEGIN {printf("%.0f%%", (b > 0 ? 100 * a / b : 0))}'));" \
    "$(stat "$out/w${w}_min" minimized) minimised, $(stat "$out/w${w}_min" confirmations) confirmations"
done
