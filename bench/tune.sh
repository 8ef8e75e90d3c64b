#!/usr/bin/env bash
# qtune tune on the bundled models, then the checkpoint loaded the way a deployment loads
# it (`qtune bench MODEL --checkpoint`), to show it reproduces the tuned latency. The
# autotuned candidate reads bench/autotune.sh's work dirs when they exist.
#
#   bench/tune.sh [BUILD_DIR] [THREADS]     (defaults: build "1,2")
#
# Prints a Markdown table (docs/performance.md quotes it). The bench runs come after the
# tuning, so machine noise between the two shows as a ratio away from 1.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
threads=${2:-1,2}
qtune=$build/src/cli/qtune
make_model=$build/tools/make_model/qtune_make_model
out=bench/results/tune
autotune_out=bench/results/autotune
mkdir -p "$out"
[[ -x $qtune ]] || { echo "bench/tune.sh: build qtune first ($qtune)" >&2; exit 1; }

images=models/images
imagenet="scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225"
resnet=$autotune_out/resnet18.onnx
mkdir -p "$autotune_out"
[[ -f $resnet ]] || "$make_model" resnet18 "$resnet" --seed 1

rows=()
tune() {
  local name=$1 model=$2; shift 2
  local extra=()
  [[ -f $autotune_out/$name/plan.json ]] && extra=(--autotune-dir "$autotune_out/$name")
  "$qtune" tune "$model" -o "$out/$name.qtc" --threads "$threads" --json "$@" "${extra[@]}" \
    > "$out/$name.tune.json" 2> "$out/$name.log" ||
    { tail -n 20 "$out/$name.log" >&2; echo "bench/tune.sh: tune $name failed" >&2; exit 1; }
  "$qtune" bench "$model" --checkpoint "$out/$name.qtc" --iters 50 --json \
    > "$out/$name.bench.json" 2>> "$out/$name.log"
  rows+=("$(node -e '
    const t = require(process.argv[1]), b = require(process.argv[2]);
    const row = t.table.find((r) => r.chosen);
    const kb = (require("fs").statSync(process.argv[3]).size / 1024).toFixed(1);
    const bf16 = t.table.find((r) => r.candidate === "bf16" && r.threads === row.threads);
    const bf16ms = bf16 && typeof bf16.latency_ms === "number" ? bf16.latency_ms.toFixed(3) : "-";
    console.log(`| ${process.argv[4]} | ${row.candidate} | ${row.threads} | ` +
      `${row.fp32_latency_ms.toFixed(3)} | ${bf16ms} | ${row.latency_ms.toFixed(3)} | ` +
      `${b.median_ms.toFixed(3)} | ${(b.median_ms / row.latency_ms).toFixed(2)} | ${kb} |`);
  ' "$PWD/$out/$name.tune.json" "$PWD/$out/$name.bench.json" "$out/$name.qtc" "$name")")
}

tune fmnist_resnet models/fmnist/fmnist_resnet.onnx --calib models/fmnist/calib_512.npy \
  --calib-samples 128
tune ppocr_cls models/ppocr/ppocr_cls.onnx --calib "$images" \
  --preprocess "bgr,resize=48x192,scale=0.00784314,mean=1"
tune resnet18 "$resnet" --calib "$images" --preprocess "resize=256,crop=224,$imagenet"

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), threads tried $threads"
echo
echo "| model | chosen | threads | fp32 ms (tune) | bf16 ms (tune) | tuned ms (tune) | bench --checkpoint ms | bench / tune | checkpoint KiB |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
