#!/bin/sh
# test_slurm.sh GGFUZZ SOURCE_DIR [SUITE_JSON SUITE_XML] — the repository's sbatch scripts
# submitted to a real one-node Slurm started here (slurm_local.sh: munged, slurmctld, slurmd):
#  1. fuzz/slurm/nightly-campaign.sbatch as a 4-task array against a CPU mutant for 60 s; array
#     task 2 is killed with `scancel --full --signal=KILL` mid-campaign: its store still reads
#     whole, and requeued (`scontrol requeue`) it goes on at the case it stopped at, with its
#     seed, losing no count. The merged CAMPAIGN/artifacts holds each signature once, with the
#     shards' counts summed, the mutant's among them, and merging again writes nothing.
#  2. fuzz/slurm/release-gate.sbatch as a 3-task array on the quick tier and a merge job after
#     it: the merged verdict, JSON and JUnit equal the single-process run's apart from timings
#     (SUITE_JSON and SUITE_XML, the ctest suite_quick's, when given; else it is run here).
# Without root or the Slurm and MUNGE packages it skips (exit 77) with the reason, unless
# GGFUZZ_TEST_SLURM_REQUIRED=1 (set by .ci/run), which makes that a failure.
set -u
GGFUZZ=$(realpath "${1:?usage: test_slurm.sh GGFUZZ SOURCE_DIR [SUITE_JSON SUITE_XML]}")
SRC=${2:?the source directory}
# As given (the case files' names in a suite result are the --suite-dir's), made absolute.
case $SRC in /*) ;; *) SRC=$(realpath "$SRC") ;; esac
SINGLE_JSON=${3:-}
SINGLE_XML=${4:-}
KERNEL=grouped_bf16_cpu_tiled
MUTANT=wgrad_zero_uninit
HERE="$SRC/tests/slurm"
t0=$(date +%s)

skip() {
  if [ "${GGFUZZ_TEST_SLURM_REQUIRED:-0}" = 1 ]; then
    echo "test_slurm: FAIL: cannot run Slurm here: $*" >&2
    exit 1
  fi
  echo "test_slurm: SKIPPED: $* (sh .ci/deps slurm as root installs what it needs)"
  exit 77
}

fail() {
  echo "test_slurm: FAIL: $*" >&2
  exit 1
}

step() {
  echo "test_slurm: [$(( $(date +%s) - t0 )) s] $*"
}

[ "$(id -u)" = 0 ] || skip "not root: slurmd must start jobs as their user"
for p in munged mungekey slurmctld slurmd sbatch srun scontrol scancel squeue; do
  command -v $p >/dev/null 2>&1 || skip "$p is not installed"
done
T=$(mktemp -d /tmp/ggfuzz-slurm-XXXXXX)
trap 'sh "$HERE/slurm_local.sh" stop "$T/cluster"; [ "${GG_SLURM_KEEP:-0}" = 1 ] || rm -rf "$T"' EXIT
sh "$HERE/slurm_local.sh" start "$T/cluster" || skip "the Slurm daemons did not start"
. "$T/cluster/env"
export GGFUZZ
step "Slurm is up: $(sinfo -h -o '%P %D nodes %c CPUs %T')"

# The state of job id ("" once Slurm has forgotten it).
state() {
  scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1
}
# Waits up to $2 seconds until job $1 is in a state of the pattern $3.
wait_state() {
  i=0
  while ! state "$1" | grep -qE "$3"; do
    i=$((i + 1))
    [ $i -gt $(( $2 * 5 )) ] && fail "job $1 is $(state "$1"), not $3, after $2 s"
    sleep 0.2
  done
}
# The value of key in a fuzzer_stats file.
stat_of() {
  sed -n "s/^$2 *: //p" "$1"
}
# "NAME COUNT" for every finding of store $1, sorted by name.
counts() {
  for f in "$1"/*-*.case; do
    [ -f "$f" ] || continue
    printf '%s %s\n' "$(basename "$f")" "$(sed -n 's/^@finding count=\([0-9]*\).*/\1/p' "$f")"
  done | sort
}

# ---- 1. the nightly campaign as a 4-task array ----------------------------------------------
C="$T/campaign"
cd "$T" || fail "cannot enter $T"
camp=$(sbatch --parsable --array=0-3 --output="$T/campaign-%a.out" \
       "$SRC/fuzz/slurm/nightly-campaign.sbatch" "$C" --kernel $KERNEL --mutant $MUTANT \
       --max-total-time 60 --workers 1 --sync-interval 10 --seed 11) || fail "sbatch refused the campaign"
step "campaign submitted: job array $camp"

# ---- 2. the release gate's quick tier as a 3-task array and its merge job --------------------
G="$T/gate"
shards=$(sbatch --parsable --array=0-2 --output="$T/gate-%a.out" \
         "$SRC/fuzz/slurm/release-gate.sbatch" "$G" --tier quick \
         --suite-dir "$SRC/corpus/suite") || fail "sbatch refused the gate's shards"
merge=$(sbatch --parsable --dependency=afterany:$shards --output="$T/gate-merge.out" \
        "$SRC/fuzz/slurm/release-gate.sbatch" --merge "$G") || fail "sbatch refused the merge"
step "gate submitted: shards $shards, merge $merge after them"

# ---- the kill: array task 2, mid-campaign ---------------------------------------------------
wait_state "${camp}_2" 60 RUNNING
S2="$C/shard-2"
i=0
until [ -f "$S2/fuzzer_stats" ] && [ "$(stat_of "$S2/fuzzer_stats" execs_done)" -gt 3 ] 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 300 ] && fail "shard 2 ran no case in 60 s: $(cat "$T/campaign-2.out")"
  sleep 0.2
done
sleep 15
scancel --full --signal=KILL "${camp}_2" || fail "scancel refused"
wait_state "${camp}_2" 30 'CANCELLED|FAILED'
step "shard 2 killed (SIGKILL) at case $(stat_of "$S2/fuzzer_stats" next_case): $(state "${camp}_2")"
next=$(stat_of "$S2/fuzzer_stats" next_case)
seed=$(stat_of "$S2/fuzzer_stats" seed)
# Its store reads whole: every finding parses (merged into a scratch store).
"$GGFUZZ" merge "$S2/artifacts" -o "$T/check-2" >"$T/check-2.out" 2>&1 ||
  fail "shard 2's store does not read after the kill: $(cat "$T/check-2.out")"
counts "$S2/artifacts" > "$T/killed-counts"
step "shard 2's store after the kill: $(wc -l < "$T/killed-counts") findings, every one whole"
scontrol requeue "${camp}_2" || fail "scontrol requeue refused"
scontrol update jobid="${camp}_2" StartTime=now >/dev/null 2>&1
wait_state "${camp}_2" 60 'RUNNING|COMPLETED'
step "shard 2 requeued: $(state "${camp}_2")"

# ---- the end of the campaign ----------------------------------------------------------------
for a in 0 1 2 3; do
  wait_state "${camp}_$a" 150 'COMPLETED|FAILED|CANCELLED|TIMEOUT'
done
step "campaign over: $(for a in 0 1 2 3; do printf '%s ' "$(state "${camp}_$a")"; done)"
grep -q "going on where it stopped" "$T/campaign-2.out" ||
  fail "the requeued shard started afresh: $(cat "$T/campaign-2.out")"
grep -q "INFO: resuming at case $next of seed $seed;" "$T/campaign-2.out" ||
  fail "the requeued shard did not go on at case $next of seed $seed: $(grep INFO "$T/campaign-2.out")"
[ "$(stat_of "$S2/fuzzer_stats" seed)" = "$seed" ] || fail "shard 2's seed changed"
# Nothing filed before the kill was lost, nor filed again: no count went down.
counts "$S2/artifacts" | join - "$T/killed-counts" | while read -r name now before; do
  [ "$now" -ge "$before" ] || { echo "$name: $before before the kill, $now after"; exit 1; }
done || fail "shard 2 lost counts"
for a in 0 1 3; do
  grep -q "INFO: shard $a/4 (" "$T/campaign-$a.out" || fail "array task $a is not shard $a/4"
done
# The merged store: each signature once, with the summed count of the shards' stores.
"$GGFUZZ" merge "$C" > "$T/merge.out" 2>&1 || fail "ggfuzz merge: $(cat "$T/merge.out")"
grep -q " 0 files written" "$T/merge.out" || fail "merging again changed the store: $(cat "$T/merge.out")"
cat "$C"/shard-*/artifacts/*-*.case 2>/dev/null | sed -n 's/^@expect .*sig=//p' | sort -u > "$T/sigs-shards"
sed -n 's/^@expect .*sig=//p' "$C"/artifacts/*-*.case | sort > "$T/sigs-merged"
[ -s "$T/sigs-merged" ] || fail "the campaign found nothing: $(tail -5 "$T/campaign-0.out")"
cmp -s "$T/sigs-shards" "$T/sigs-merged" || fail "the merged store's signatures are not the shards' ones, once each"
grep -l "mutant=$MUTANT" "$C"/artifacts/*-*.case >/dev/null || fail "no finding of the mutant in the merged store"
for f in "$C"/artifacts/*-*.case; do
  n=$(basename "$f")
  sum=0
  for s in "$C"/shard-*/artifacts/"$n"; do
    [ -f "$s" ] && sum=$(( sum + $(sed -n 's/^@finding count=\([0-9]*\).*/\1/p' "$s") ))
  done
  got=$(sed -n 's/^@finding count=\([0-9]*\).*/\1/p' "$f")
  [ "$got" = "$sum" ] || fail "$n: merged count $got, the shards' sum $sum"
done
step "merged store: $(wc -l < "$T/sigs-merged") signatures, each once with the shards' summed count; $(sed -n 's/^merged //p' "$T/merge.out")"

# ---- the gate ---------------------------------------------------------------------------------
wait_state "$merge" 240 'COMPLETED|FAILED|CANCELLED|TIMEOUT'
[ "$(state "$merge")" = COMPLETED ] || fail "the merge job ended $(state "$merge"): $(cat "$T/gate-merge.out")"
grep -q "gate: PASS" "$T/gate-merge.out" || fail "the merged gate did not pass: $(cat "$T/gate-merge.out")"
if [ -z "$SINGLE_JSON" ] || [ ! -f "$SINGLE_JSON" ] || [ ! -f "$SINGLE_XML" ]; then
  step "no single-process result given: running the quick tier in one process"
  SINGLE_JSON="$T/single.json"
  SINGLE_XML="$T/single.xml"
  "$GGFUZZ" suite --tier quick --gate --suite-dir "$SRC/corpus/suite" --junit "$SINGLE_XML" \
            --json "$SINGLE_JSON" > "$T/single.out" 2>&1 || fail "the single-process suite: $(tail -3 "$T/single.out")"
fi
/usr/bin/python3 "$HERE/suite_equal.py" "$SINGLE_JSON" "$G/suite.json" "$SINGLE_XML" "$G/suite.xml" ||
  fail "the merged gate differs from the single-process run"
step "the 3-way sharded quick tier merged equals the single-process run: $(grep '^suite ' "$T/gate-merge.out")"
step "PASS"
exit 0
