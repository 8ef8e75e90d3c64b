#!/usr/bin/env bash
# qtune autotune on the bundled models: the tuned placement against fp32 and against the
# rule-based placement (`qtune quantize`), measured side by side (interleaved) in one run
# by the tuner's own final step, plus the tuned model's accuracy where labels exist.
#
#   bench/autotune.sh [BUILD_DIR] [MODE] [THREADS]     (defaults: build default 1)
#
# Writes bench/results/autotune/<model>/ (work dirs, report.json) and prints a Markdown
# table (docs/performance.md quotes it). resnet18 is the architecture with random weights
# written by qtune_make_model (speed only). PP-OCR det runs at 320x320 to keep the run
# short on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mode=${2:-default}
threads=${3:-1}
qtune=$build/src/cli/qtune
make_model=$build/tools/make_model/qtune_make_model
out=bench/results/autotune
mkdir -p "$out"
[[ -x $qtune ]] || { echo "bench/autotune.sh: build qtune first ($qtune)" >&2; exit 1; }

images=models/images
imagenet="scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225"
resnet=$out/resnet18.onnx
[[ -f $resnet ]] || "$make_model" resnet18 "$resnet" --seed 1

rows=()
tune() {
  local name=$1 model=$2; shift 2
  local dir=$out/$name
  local start=$SECONDS
  "$qtune" autotune "$model" -o "$dir.tuned.onnx" --work-dir "$dir" --mode "$mode" \
    --threads "$threads" --json "$@" > "$dir.report.json" 2> "$dir.log" ||
    { tail -n 20 "$dir.log" >&2; echo "bench/autotune.sh: autotune $name failed" >&2; exit 1; }
  local elapsed=$((SECONDS - start))
  rows+=("$(node -e '
    const r = require(process.argv[1]);
    const f = r.final, b = r.baseline, c = r.counts;
    const fmt = (x) => x.toFixed(3);
    console.log(`| ${process.argv[2]} | ${fmt(b.fp32_ms)} | ${fmt(b.rule_ms)} | ${fmt(f.latency_ms)} | ` +
      `${fmt(f.speedup_vs_fp32)} | ${fmt(f.speedup_vs_rule)} | ${r.patterns.length} | ` +
      `${c.measured + c.replayed} | ${c.skipped_same_placement + c.skipped_same_plan} | ` +
      `${fmt(r.noise_median)} | ${process.argv[3]} |`);
  ' "$PWD/$dir.report.json" "$name" "$elapsed")")
}

tune fmnist_resnet models/fmnist/fmnist_resnet.onnx --calib models/fmnist/calib_512.npy \
  --calib-samples 128
tune ppocr_cls models/ppocr/ppocr_cls.onnx --calib "$images" \
  --preprocess "bgr,resize=48x192,scale=0.00784314,mean=1"
tune ppocrv4_det models/ppocr/ppocrv4_det.onnx --calib "$images" \
  --preprocess "bgr,resize=320x320,$imagenet"
tune resnet18 "$resnet" --calib "$images" --preprocess "resize=256,crop=224,$imagenet"

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), threads $threads, mode $mode"
echo
echo "| model | fp32 ms | rules ms | tuned ms | tuned vs fp32 | tuned vs rules | patterns | measured | dedup skips | noise | tune s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "fmnist accuracy (test_2000), fp32 against the tuned model:"
"$qtune" eval models/fmnist/fmnist_resnet.onnx "$out/fmnist_resnet.tuned.onnx" \
  --data models/fmnist/test_2000.npy --labels models/fmnist/test_2000_labels.npy | grep -Ei 'top-1|accuracy'
