#!/usr/bin/env bash
# Audio front end and ViT block (issue 16): qtune vs ONNX Runtime on the two models
# tests/runtime/engine_coverage_test builds with qtune's graph builder.
#
#   1. Builds qtune and engine_coverage_test (ninja; a no-op when they are up to date).
#   2. Writes audio_frontend.onnx (log-mel spectrogram, STFT as a strided 1-D Conv,
#      opset 13) and vit_block.onnx (pre-norm encoder block at opset 13 with a fused QKV
#      Split, mean-pooled over tokens) into BUILD/bench-frontend/.
#   3. Runs bench/compare.js on them (alternating qtune/ORT rounds, medians, ratios):
#      audio 1 s of 16 kHz audio (1x1x16000) and 10 s (1x1x160000); ViT batch 1 and 8.
#
# Usage: bench/frontend.sh [--rounds N] [--iters N] [--warmup N] [--threads 1,2]
#                          [--build DIR]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

rounds=3 iters=30 warmup=5 threads=1 build=build
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --iters) iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --threads) threads=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "frontend.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

ninja -C "$build" qtune engine_coverage_test >/dev/null
out=$root/$build/bench-frontend
mkdir -p "$out"
QTUNE_FRONTEND_EXPORT_DIR=$out "$build/tests/runtime/engine_coverage_test" \
  --gtest_filter='EngineCoverageOrtTest.ExportForBenchmarks' >/dev/null

node bench/compare.js --qtune "$build/src/cli/qtune" --threads "$threads" --rounds "$rounds" \
  --iters "$iters" --warmup "$warmup" \
  --model "audio_1s=$out/audio_frontend.onnx:audio=1x1x16000" \
  --model "audio_10s=$out/audio_frontend.onnx:audio=1x1x160000" \
  --model "vit_block_b1=$out/vit_block.onnx:x=1x197x192" \
  --model "vit_block_b8=$out/vit_block.onnx:x=8x197x192"
