#!/usr/bin/env bash
# QDQ interop: qtune and ONNX Runtime on each other's QDQ layouts (issue 16).
#
#   1. Writes, with `qtune quantize` (max calibrator), into BUILD/bench-interop/:
#        <model>.ort.onnx   --target ort: ONNX Runtime quantize_static's layout (Q/DQ pairs
#                           shared by every reader, uint8 activations, int8 per-channel
#                           weights with explicit zero points, int32 bias, a Q after each
#                           Conv/MatMul output; quant/ort_layout.h)
#        <model>.cpu.onnx   --target cpu: qtune's own placement
#      for the bundled fmnist ResNet (its calibration set) and ResNet-18 (architecture with
#      seed-1 weights from qtune_make_model, calibrated on models/images).
#   2. Prints each ORT-layout model's plan summary: fused QConv/QMatMul, float Convs left
#      (with the reason `--print-plan` gives), reference steps.
#   3. bench/compare.js: qtune vs ORT on every file (alternating rounds, medians, ratios):
#      qtune/ORT on the ORT layout, and ORT running qtune's cpu export vs the ort export.
#   4. qtune resnet18: ORT-layout int8 vs fp32 (alternating `qtune bench` rounds, medians).
#
# Usage: bench/interop_qdq.sh [--build DIR] [--threads 1] [--rounds 5] [--iters 30]
#                             [--warmup 5] [--quick]
# Targets (issue 16): every Conv fuses; int8 >= 3x faster than qtune fp32 on resnet18 at
# 1 thread; qtune/ORT <= 0.8 on the ORT-layout files.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=build threads=1 rounds=5 iters=30 warmup=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift ;;
    --threads) threads=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --iters) iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --quick) rounds=1; iters=5; warmup=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "interop_qdq.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

qtune=$root/$build/src/cli/qtune
make_model=$root/$build/tools/make_model/qtune_make_model
out=$root/$build/bench-interop
images=$root/models/images
imagenet=scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225
fail() { echo "interop_qdq.sh: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }
quiet_ort() { grep -v 'CleanUnusedInitializersAndNodeArgs' >&2 || true; }

[[ -x $qtune && -x $make_model ]] ||
  fail "build qtune and qtune_make_model first (ninja -C $build qtune qtune_make_model)"
[[ -f $root/tools/ort/node_modules/onnxruntime-node/package.json ]] ||
  fail "ONNX Runtime is missing: (cd tools/ort && npm install --ignore-scripts)"
mkdir -p "$out"
resnet=$out/resnet18.onnx
[[ -s $resnet ]] || "$make_model" resnet18 "$resnet" --seed 1 --overwrite > /dev/null

step "quantizing (--target ort and --target cpu) -> $out"
quantize() {  # NAME MODEL TARGET ARGS...
  local name=$1 model=$2 target=$3; shift 3
  local file=$out/$name.$target.onnx
  "$qtune" quantize "$model" -o "$file" --target "$target" "$@" > "$out/$name.$target.txt" 2>&1 ||
    { tail -n 20 "$out/$name.$target.txt" >&2; fail "qtune quantize $name --target $target failed"; }
  echo "$file: $(grep -E 'layers quantized' "$out/$name.$target.txt" || true)"
}
for target in ort cpu; do
  quantize fmnist models/fmnist/fmnist_resnet.onnx "$target" \
    --calib models/fmnist/calib_512.npy --calib-samples 256
  quantize resnet18 "$resnet" "$target" --calib "$images" \
    --preprocess "resize=256,crop=224,$imagenet"
done

step "qtune's plan for the ORT-layout files"
plan_summary() {  # NAME SHAPE
  local plan=$out/$1.ort.plan.txt
  "$qtune" run "$out/$1.ort.onnx" --print-plan --shape "$2" > /dev/null 2> "$plan" ||
    fail "qtune run --print-plan $1 failed ($plan)"
  printf '%s: QConv %s, QMatMul %s, float Conv/FusedConv %s, reference steps %s\n' "$1" \
    "$(grep -cE '^ *[0-9]+ QConv ' "$plan")" "$(grep -cE '^ *[0-9]+ QMatMul ' "$plan")" \
    "$(grep -cE '^ *[0-9]+ (Conv|FusedConv) ' "$plan")" "$(grep -c ' reference' "$plan")"
  grep 'not int8:' "$plan" | sort | uniq -c || true
}
plan_summary fmnist input=1x1x28x28
plan_summary resnet18 input=1x3x224x224

step "qtune vs ONNX Runtime ($threads thread(s), $rounds alternating rounds of $iters runs)"
{ node bench/compare.js --qtune "$qtune" --threads "$threads" --rounds "$rounds" \
    --iters "$iters" --warmup "$warmup" --json "$out/compare.json" \
    --model "fmnist.ort=$out/fmnist.ort.onnx:input=1x1x28x28" \
    --model "fmnist.cpu=$out/fmnist.cpu.onnx:input=1x1x28x28" \
    --model "resnet18.ort=$out/resnet18.ort.onnx:input=1x3x224x224" \
    --model "resnet18.cpu=$out/resnet18.cpu.onnx:input=1x3x224x224" \
    2>&1 1>&3 | quiet_ort; } 3>&1

step "qtune resnet18: ORT-layout int8 vs fp32"
QTUNE=$qtune FP32=$resnet INT8=$out/resnet18.ort.onnx THREADS=$threads ROUNDS=$rounds \
ITERS=$iters WARMUP=$warmup JSON=$out/int8_vs_fp32.json INT8_LABEL='int8 (ORT layout)' \
  node bench/int8_speedup.js
echo
echo "results: $out/compare.json, $out/int8_vs_fp32.json"
