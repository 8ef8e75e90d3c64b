#!/usr/bin/env bash
# Batch-1 MatMul stack (issue 26): qtune against ONNX Runtime on the decode-step shape of
# a transformer's feed-forward layers, where every weight is read once per run.
#
#   1. Builds qtune and qtune_make_model (ninja; a no-op when they are up to date).
#   2. Writes matmul_stack.onnx (4 x MatMul 2048x2048 + bias Add + Relu, fp32, 64 MiB of
#      weights, input "x" [1,2048]) into BUILD/bench-matmul/.
#   3. Runs bench/compare.js on it (alternating qtune/ORT rounds, medians, ratios).
#   With --busy, one core is kept busy by a shell loop for the whole measurement (the
#   "while other work shares the cores" figure of docs/performance.md).
#
# Usage: bench/matmul_b1.sh [--rounds N] [--iters N] [--warmup N] [--threads 1,2]
#                           [--layers N] [--width N] [--busy] [--build DIR]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

rounds=7 iters=100 warmup=10 threads=1 layers=4 width=2048 busy=0 build=build
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --iters) iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --threads) threads=$2; shift ;;
    --layers) layers=$2; shift ;;
    --width) width=$2; shift ;;
    --busy) busy=1 ;;
    --build) build=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "matmul_b1.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

ninja -C "$build" qtune qtune_make_model >/dev/null
out=$root/$build/bench-matmul
mkdir -p "$out"
model=$out/matmul_stack_${layers}x${width}.onnx
"$build/tools/make_model/qtune_make_model" matmul_stack "$model" --layers "$layers" \
  --width "$width" --overwrite >/dev/null

busy_pid=
if [[ $busy == 1 ]]; then
  sh -c 'while :; do :; done' &
  busy_pid=$!
  trap 'kill "$busy_pid" 2>/dev/null || true' EXIT
fi
node bench/compare.js --qtune "$build/src/cli/qtune" --threads "$threads" --rounds "$rounds" \
  --iters "$iters" --warmup "$warmup" --model "matmul_stack_b1=$model:x=1x$width"
