#!/usr/bin/env bash
# qtune's demo on the bundled example model (a Fashion-MNIST ResNet): describe it, run it
# on 2000 real test images, quantize it to INT8 with 512 calibration images, check the
# accuracy of the quantized model against fp32, measure both latencies, autotune the Q/DQ
# placement by measuring, and tune the deployment into a checkpoint that `bench` loads.
# Usage: examples/demo.sh [BUILD_DIR]
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
echo "== qtune quantize $MODEL (INT8, calibrated on models/fmnist/calib_512.npy)"
"$QTUNE" quantize "$MODEL" -o "$OUT/fmnist_int8.onnx" --calib models/fmnist/calib_512.npy

echo
echo "== qtune eval: fp32 vs INT8 on the 2000 test images"
"$QTUNE" eval "$MODEL" "$OUT/fmnist_int8.onnx" --data models/fmnist/test_2000.npy \
  --labels models/fmnist/test_2000_labels.npy

for m in "$MODEL" "$OUT/fmnist_int8.onnx"; do
  echo
  echo "== qtune bench $m (batch 1, 1 thread)"
  "$QTUNE" bench "$m" --shape input=1x1x28x28 --iters 200 --warmup 20
done

echo
echo "== qtune autotune (quick): which Q/DQ placement runs fastest here, measured"
"$QTUNE" autotune "$MODEL" -o "$OUT/fmnist_tuned.onnx" --calib models/fmnist/calib_512.npy \
  --calib-samples 128 --work-dir "$OUT/autotune" --mode quick

echo
echo "== qtune tune: the fastest correct deployment, saved as a weight-free checkpoint"
"$QTUNE" tune "$MODEL" --calib models/fmnist/calib_512.npy --calib-samples 128 \
  --autotune-dir "$OUT/autotune" -o "$OUT/fmnist.qtc"

echo
echo "== qtune bench $MODEL --checkpoint (the tuned deployment, rebuilt from the model's weights)"
QTUNE_CACHE_DIR="$OUT/cache" "$QTUNE" bench "$MODEL" --checkpoint "$OUT/fmnist.qtc" --iters 200
