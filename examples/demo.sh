#!/usr/bin/env bash
# qtune's demo on the bundled example model. Usage: examples/demo.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
QTUNE="$BUILD_DIR/src/cli/qtune"
MODEL=models/fmnist/fmnist_resnet.onnx

echo "== qtune inspect $MODEL"
"$QTUNE" inspect "$MODEL"
