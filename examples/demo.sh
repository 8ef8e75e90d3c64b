#!/usr/bin/env bash
# qtune's demo on the bundled example model (a Fashion-MNIST ResNet): describe it, run it
# on 2000 real test images, and measure its latency. Usage: examples/demo.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
QTUNE="$BUILD_DIR/src/cli/qtune"
MODEL=models/fmnist/fmnist_resnet.onnx
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "== qtune inspect $MODEL"
"$QTUNE" inspect "$MODEL"

echo
echo "== qtune run $MODEL on models/fmnist/test_2000.npy"
"$QTUNE" run "$MODEL" --input input=models/fmnist/test_2000.npy --output "$OUT/logits.npz"

echo
echo "== qtune bench $MODEL (batch 1, 1 thread)"
"$QTUNE" bench "$MODEL" --shape input=1x1x28x28 --iters 200 --warmup 20
