#!/usr/bin/env bash
# INT8 benchmark: qtune vs ONNX Runtime on the same QDQ models, and qtune int8 vs fp32.
#
#   1. Builds qtune and qdq_models_test (ninja; a no-op when they are up to date).
#   2. Writes QDQ models into build/bench-int8/:
#        qtune/   qtune's own exports (`qtune quantize`, int8 recipe, max calibrator) of
#                 fmnist_resnet, ppocr_cls, ppocrv4_det and resnet18 (random weights,
#                 written by qtune_make_model with the seed qdq_models_test uses);
#        ort/     ONNX Runtime-layout QDQ models (Q/DQ around every op, u8 asymmetric
#                 activations, int32 bias: what ONNX Runtime's quantize_static writes),
#                 written by qdq_models_test's *_ort_u8 and ppocrv4_det_u8 cases.
#      A model newer than its source and than the binary that wrote it is reused.
#   3. Runs bench/compare.js (alternating qtune/ORT rounds, medians, qtune/ORT ratios and
#      their geomean) over all of them at the requested thread counts.
#   4. Times resnet18 fp32 against its qtune int8 export with `qtune bench` alone
#      (alternating rounds, medians) and prints the int8/fp32 speedup.
#
# Usage: bench/int8.sh [--quick] [--rounds N] [--iters N] [--warmup N] [--threads 1,2]
#                      [--build DIR]
# Exits non-zero when any step fails (a quantization, the test, a benchmark run).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

rounds=3 iters=30 warmup=5 threads=1,2 build=build quick=0
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1; rounds=1; iters=5; warmup=1 ;;
    --rounds) rounds=$2; shift ;;
    --iters) iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --threads) threads=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "int8.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

qtune=$root/$build/src/cli/qtune
qdq_test=$root/$build/tests/runtime/qdq_models_test
out=$root/$build/bench-int8
resnet=$out/resnet18.onnx
images=$root/models/images
imagenet=scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225

step() { printf '\n== %s\n' "$*"; }
# ONNX Runtime warns once per initializer that its optimizer leaves unused; drop those.
quiet_ort() { grep -v 'CleanUnusedInitializersAndNodeArgs' >&2 || true; }
fail() { echo "int8.sh: $*" >&2; exit 1; }

[[ -f $root/$build/build.ninja ]] ||
  fail "$build/build.ninja is missing: configure first (cmake -S . -B $build -G Ninja)"
[[ -f $root/tools/ort/node_modules/onnxruntime-node/package.json ]] ||
  fail "ONNX Runtime is missing: (cd tools/ort && npm install --ignore-scripts)"

step "building qtune, qtune_make_model and qdq_models_test"
ninja -C "$build" qtune qtune_make_model qdq_models_test
mkdir -p "$out/qtune" "$out/ort"
# The architecture from the graph builder, seed 1 like tests/util/test_models.h; rewritten
# only when qtune_make_model changed (so the int8 export below stays fresh).
make_model=$root/$build/tools/make_model/qtune_make_model
[[ -s $resnet && $resnet -nt $make_model ]] ||
  "$make_model" resnet18 "$resnet" --seed 1 --overwrite

# fresh OUT SRC...: OUT exists and is newer than every SRC.
fresh() {
  local target=$1; shift
  [[ -s $target ]] || return 1
  local src
  for src in "$@"; do [[ $target -nt $src ]] || return 1; done
}

# quantize NAME MODEL ARGS...: qtune's int8 export of MODEL to qtune/NAME.int8.onnx.
quantize() {
  local name=$1 model=$2; shift 2
  local target=$out/qtune/$name.int8.onnx
  if fresh "$target" "$model" "$qtune"; then
    echo "$name: $target is up to date"
    return
  fi
  echo "$name: qtune quantize $model $*"
  "$qtune" quantize "$model" -o "$target.tmp" "$@" > "$out/qtune/$name.summary.txt" 2>&1 ||
    { rm -f "$target.tmp"; tail -n 20 "$out/qtune/$name.summary.txt" >&2; fail "qtune quantize $model failed (table: $out/qtune/$name.summary.txt)"; }
  mv "$target.tmp" "$target"
  grep -E 'layers quantized' "$out/qtune/$name.summary.txt" || true
}

step "qtune's QDQ exports -> $out/qtune"
quantize fmnist_resnet models/fmnist/fmnist_resnet.onnx --calib models/fmnist/calib_512.npy
quantize ppocr_cls models/ppocr/ppocr_cls.onnx --calib "$images" \
  --preprocess "bgr,resize=48x192,scale=0.00392157,mean=0.5,std=0.5"
quantize ppocrv4_det models/ppocr/ppocrv4_det.onnx --calib "$images" \
  --preprocess "bgr,resize=640x640,$imagenet"
if [[ -f $resnet ]]; then
  quantize resnet18 "$resnet" --calib "$images" --preprocess "resize=256,crop=224,$imagenet"
else
  echo "resnet18: $resnet is not there; skipped"
fi

step "ONNX Runtime-layout QDQ models (qdq_models_test) -> $out/ort"
ort_cases=(fmnist_ort_u8 ppocrv4_det_u8)
[[ -f $resnet ]] && ort_cases+=(resnet18_ort_u8)
stale=0
for c in "${ort_cases[@]}"; do fresh "$out/ort/${c}_qdq.onnx" "$qdq_test" || stale=1; done
if [[ $stale == 0 ]]; then
  echo "${ort_cases[*]}: up to date"
else
  filter=$(printf '*/%s:' "${ort_cases[@]}")
  for c in "${ort_cases[@]}"; do rm -f "$out/ort/${c}_qdq.onnx"; done
  TEST_TMPDIR=$out/ort "$qdq_test" --gtest_filter="${filter%:}" > "$out/ort/qdq_models_test.log" 2>&1 ||
    { tail -n 30 "$out/ort/qdq_models_test.log" >&2; fail "qdq_models_test failed (log: $out/ort/qdq_models_test.log)"; }
  grep -E '^\[ +(OK|SKIPPED|PASSED) ' "$out/ort/qdq_models_test.log" || true
fi
for c in "${ort_cases[@]}"; do
  [[ -s $out/ort/${c}_qdq.onnx ]] || fail "qdq_models_test did not write $out/ort/${c}_qdq.onnx"
done

step "qtune vs ONNX Runtime on the same QDQ models"
models=(
  --model "fmnist_resnet.qtune=$out/qtune/fmnist_resnet.int8.onnx:input=1x1x28x28"
  --model "fmnist_resnet.ort_u8=$out/ort/fmnist_ort_u8_qdq.onnx:input=1x1x28x28"
  --model "ppocr_cls.qtune=$out/qtune/ppocr_cls.int8.onnx:x=1x3x48x192"
  --model "ppocrv4_det.qtune=$out/qtune/ppocrv4_det.int8.onnx:x=1x3x640x640"
  --model "ppocrv4_det.ort_u8=$out/ort/ppocrv4_det_u8_qdq.onnx:x=1x3x640x640"
)
if [[ -f $resnet ]]; then
  models+=(
    --model "resnet18.qtune=$out/qtune/resnet18.int8.onnx:input=1x3x224x224"
    --model "resnet18.ort_u8=$out/ort/resnet18_ort_u8_qdq.onnx:input=1x3x224x224"
  )
fi
{ node bench/compare.js --qtune "$qtune" --threads "$threads" --rounds "$rounds" \
    --iters "$iters" --warmup "$warmup" --json "$out/compare.json" "${models[@]}" 2>&1 1>&3 |
    quiet_ort; } 3>&1
# compare.js's geomean mixes both layouts; print one per layout too.
node -e '
const rows = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).rows;
const groups = {};
const layout = {qtune: "qtune exports", ort_u8: "ORT-layout models"};
for (const r of rows) {
  const key = `${layout[r.model.split(".").pop()]}, ${r.threads} thread(s)`;
  (groups[key] ??= []).push(r.ratio);
}
for (const [k, xs] of Object.entries(groups)) {
  const g = Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
  console.log(`geomean qtune/ORT over ${xs.length} ${k}: ${g.toFixed(3)}`);
}' "$out/compare.json"

if [[ ! -f $resnet ]]; then
  echo; echo "resnet18 int8 vs fp32: $resnet is not there; skipped"
  exit 0
fi

step "qtune resnet18: int8 (qtune export) vs fp32"
QTUNE=$qtune FP32=$resnet INT8=$out/qtune/resnet18.int8.onnx THREADS=$threads ROUNDS=$rounds \
ITERS=$iters WARMUP=$warmup JSON=$out/int8_vs_fp32.json INT8_LABEL='int8' \
  node bench/int8_speedup.js
echo
echo "results: $out/compare.json, $out/int8_vs_fp32.json"
