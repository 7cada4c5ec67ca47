#!/bin/sh
# gpu_minimize: a GPU kernel's finding minimised at the desk and in a campaign, its candidates
# run in one worker process on the GPU (not a forked child, and a context, per candidate).
# `ggfuzz minimize` shrinks the fnuz_as_ocp mutant's case on grouped_fp8_cuda_tiled to a case
# that still fails the same way on replay; a 20-s campaign of that mutant minimises its new
# signatures (MIN lines, buckets filed) with its workers going on beside them.
# Usage: sh minimize_gpu.sh GGFUZZ CORPUS_DIR
set -u
ggfuzz=$1 corpus=$2
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail() {
  echo "FAIL: $*"
  tail -30 log 2>/dev/null
  exit 1
}
"$ggfuzz" minimize --kernel grouped_fp8_cuda_tiled "$corpus/mutants/fnuz_as_ocp.case" \
  -o small.case > log 2>&1 || fail "minimize exited $?"
cat log
grep -q '^after: .* groups=1 ' log || fail "the minimised case has more than one group"
grep -q '^kernel grouped_fp8_cuda_tiled$' small.case || fail "the kernel override is not in the case"
"$ggfuzz" --replay small.case > replay 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '1 reproduced' replay || { cat replay; fail "the minimised case does not reproduce its @expect (exit $rc)"; }
"$ggfuzz" fuzz --kernel grouped_fp8_cuda_tiled --mutant fnuz_as_ocp --max-total-time 20 \
  --seed 7 > log 2>&1
grep -q ' MIN ' log || fail "the campaign minimised nothing"
grep ' MIN ' log | grep -q 'minimiser failed' && fail "a minimiser failed"
stats=ggfuzz-out/fuzzer_stats
min=$(sed -n 's/^minimized *: //p' "$stats")
execs=$(sed -n 's/^execs_done *: //p' "$stats")
echo "campaign: $execs cases, $min signatures minimised"
[ "${min:-0}" -gt 0 ] || fail "fuzzer_stats counts no minimised signature"
echo PASS
