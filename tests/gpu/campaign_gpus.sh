#!/bin/sh
# gpu_campaign_gpus: a campaign spread over every GPU of the machine (--gpus all) on the test
# plugin's grouped_bf16_cuda_plugin_naive with its mutant illegal_address_on_gpu1. On GPU 0 the
# kernel is correct: cases run and nothing is found there. With a second GPU, the mutant's device
# fault is found on GPU 1 alone: its workers restart, GPU 0's never do, and the campaign goes on.
# fuzzer_stats must count cases, faults and restarts per GPU.
# Usage: sh campaign_gpus.sh GGFUZZ PLUGIN [SECONDS]
set -u
ggfuzz=$1 plugin=$2 seconds=${3:-30}
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$ggfuzz" --plugin "$plugin" fuzz --kernel grouped_bf16_cuda_plugin_naive \
  --mutant illegal_address_on_gpu1 --gpus all --max-total-time "$seconds" --no-minimize \
  > log 2>&1
rc=$?
stats=ggfuzz-out/fuzzer_stats
stat() { sed -n "s/^$1 *: //p" "$stats"; }
fail() {
  echo "FAIL: $*"
  tail -40 log
  cat "$stats" 2>/dev/null
  exit 1
}
[ -f "$stats" ] || fail "no fuzzer_stats (exit $rc)"
gpus=$(stat gpus)
[ -n "$gpus" ] || fail "fuzzer_stats names no GPU"
n=$(echo "$gpus" | tr ',' '\n' | wc -l)
echo "GPUs: $gpus; exit $rc"
grep '^stat::gpu' log
[ "$(stat gpu0_execs_done)" -gt 0 ] || fail "no case ran on GPU 0"
[ "$(stat gpu0_faults_total)" -eq 0 ] || fail "a finding on GPU 0, where the kernel is correct"
[ "$(stat gpu0_worker_restarts)" -eq 0 ] || fail "GPU 0's worker restarted"
if [ "$n" -lt 2 ]; then
  [ $rc -eq 0 ] || fail "exit $rc on one GPU, where the kernel is correct"
  echo "one GPU: no finding, as expected; the fault on GPU 1 needs a second GPU"
  exit 0
fi
[ "$(stat gpu1_faults_total)" -gt 0 ] || fail "the device fault on GPU 1 was not found"
[ "$(stat faults_device)" -gt 0 ] || fail "the finding is not a device fault"
[ "$(stat gpu1_worker_restarts)" -gt 0 ] || fail "GPU 1's worker was not restarted"
[ "$(stat stop_reason)" = "time budget" ] || fail "the campaign stopped early: $(stat stop_reason)"
grep -q '^@gpu 1' ggfuzz-out/artifacts/device-*.case || fail "the finding does not name GPU 1"
echo "the device fault was found on GPU 1 alone; GPU 0 went on"
exit 0
