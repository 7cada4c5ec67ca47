#!/bin/sh
# The GPU run, on a machine with an NVIDIA GPU: builds the CUDA build (unless --no-build), runs
# the GPU tests (CTest label gpu) and the GPU benchmarks, and writes what they said to OUT
# (default gpu-results/): ctest.log, gpu-tests.xml (JUnit), bench_gpu_grouped.csv/.txt,
# bench_fuzz_throughput.txt and summary.txt.
# Usage: sh tests/run_gpu.sh [--build-dir DIR] [--no-build] [--quick] [--out DIR]
set -u
cd "$(dirname "$0")/.."
build=build-cuda out=gpu-results do_build=1 quick=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --out) out=$2; shift ;;
    --no-build) do_build=0 ;;
    --quick) quick=--quick ;;
    *) echo "usage: sh tests/run_gpu.sh [--build-dir DIR] [--no-build] [--quick] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out" || exit 3
out=$(cd "$out" && pwd)
if [ $do_build = 1 ]; then
  cmake -S . -B "$build" -DGG_CUDA=ON >/dev/null && cmake --build "$build" -j"$(nproc)" || exit 3
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader ||
  echo "nvidia-smi: not available"; } > "$out/summary.txt" 2>&1
ctest --test-dir "$build" -L gpu --output-on-failure --output-junit "$out/gpu-tests.xml" \
  > "$out/ctest.log" 2>&1
tests=$?
"$build/tests/bench_gpu_grouped" "$out/bench_gpu_grouped.csv" $quick > "$out/bench_gpu_grouped.txt" 2>&1
bench=$?
"$build/tests/bench_fuzz_throughput" --cases 500 grouped_bf16_cuda_persistent grouped_bf16_cuda_tiled \
  grouped_fp8_cuda_tiled mx_e4m3_cuda_grouped batched_bf16_cuda_tiled grouped_bf16_cublas_grouped \
  > "$out/bench_fuzz_throughput.txt" 2>&1
{
  echo "gpu tests: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1) (exit $tests)"
  echo "bench_gpu_grouped: exit $bench"
} >> "$out/summary.txt"
cat "$out/summary.txt"
[ $tests = 0 ] && [ $bench = 0 ]
