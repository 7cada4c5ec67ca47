#!/bin/sh
# fuzz_run.sh — runs a libFuzzer harness the same way on every machine, for the short runs of CI:
# in a fresh working corpus WORK (libFuzzer adds what it finds to its first corpus folder, and
# reads it again every second unless -reload=0), and without address-space randomisation where
# the system allows it (libFuzzer also learns from compared values, and some are addresses).
# With a fixed -seed and -runs, two runs then execute the same inputs.
# Usage: fuzz_run.sh WORK FUZZER [libFuzzer flags and seed folders...]
set -e
work=$1
fuzzer=$2
shift 2
rm -rf "$work"
mkdir -p "$work"
if setarch -R true 2>/dev/null; then
  exec setarch -R "$fuzzer" "$work" -reload=0 "$@"
fi
exec "$fuzzer" "$work" -reload=0 "$@"
