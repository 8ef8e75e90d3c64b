#!/usr/bin/env bash
# qtune autotune with ONNX Runtime as the deployment target: each candidate placement is
# timed by ONNX Runtime itself (tools/ort/ort_bench.js in pair mode: candidate and
# incumbent loaded in one process, timed alternately), then the tuned model is checked
# side by side against fp32 and the rule-based placement (`qtune quantize`) in ONNX
# Runtime, in one process per pair, and against fp32 for accuracy with `qtune eval`.
#
#   bench/autotune_ort.sh [BUILD_DIR] [MODE] [THREADS] [MODELS...]
#   (defaults: build default 1, all of fmnist_resnet ppocr_cls ppocrv4_det resnet18)
#
# Writes bench/results/autotune_ort/<model>/ (work dirs, report.json) and prints a Markdown
# table (docs/performance.md quotes it). resnet18 is the architecture with random weights
# written by qtune_make_model (speed only; eval then compares outputs, not labels).
# PP-OCR det runs at 320x320.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mode=${2:-default}
threads=${3:-1}
shift $(($# < 3 ? $# : 3))
models=("$@")
((${#models[@]})) || models=(fmnist_resnet ppocr_cls ppocrv4_det resnet18)
qtune=$build/src/cli/qtune
make_model=$build/tools/make_model/qtune_make_model
ort_bench=$PWD/tools/ort/ort_bench.js
out=bench/results/autotune_ort
mkdir -p "$out"
[[ -x $qtune ]] || { echo "bench/autotune_ort.sh: build qtune first ($qtune)" >&2; exit 1; }
[[ -d tools/ort/node_modules/onnxruntime-node ]] ||
  { echo "bench/autotune_ort.sh: ONNX Runtime is missing: run scripts/install_deps.sh" >&2; exit 1; }

images=models/images
imagenet="scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225"

# The median over 5 runs of ort_bench's ratio A/B (each run: both loaded, 2 x ITERS timed
# iterations each, alternating). Prints "A_ms B_ms ratio".
side_by_side() {
  local a=$1 b=$2 shape=$3 iters=$4
  for _ in 1 2 3 4 5; do
    node "$ort_bench" "$a" --reference "$b" --threads "$threads" --warmup 3 --iters $((2 * iters)) \
      --shape "$shape" --json | node -e '
        const text = require("fs").readFileSync(0, "utf8");
        const ms = [...text.matchAll(/"median_ms": ([0-9.]+)/g)].map((m) => Number(m[1]));
        console.log(ms[0], ms[1], ms[0] / ms[1]);'
  done | sort -g -k3 | sed -n 3p
}

rows=()
# tune NAME MODEL SHAPE ITERS EVAL_DATA AUTOTUNE_ARGS...: ITERS timed runs per model per
# round (enough for ~100 ms of timing on the small models).
tune() {
  local name=$1 model=$2 shape=$3 iters=$4 eval_data=$5; shift 5
  local dir=$out/$name
  local start=$SECONDS
  "$qtune" autotune "$model" -o "$dir.tuned.onnx" --work-dir "$dir" --mode "$mode" \
    --threads "$threads" --json --benchmark command --benchmark-command \
    "node $ort_bench {model} --reference {reference} --threads $threads --warmup 2 --iters $iters --shape $shape --json" \
    "$@" > "$dir.report.json" 2> "$dir.log" ||
    { tail -n 20 "$dir.log" >&2; echo "bench/autotune_ort.sh: autotune $name failed" >&2; exit 1; }
  local elapsed=$((SECONDS - start))
  read -r t_ms f_ms vs_fp32 < <(side_by_side "$dir.tuned.onnx" "$dir/models/fp32.onnx" "$shape" "$iters")
  read -r _ r_ms vs_rule < <(side_by_side "$dir.tuned.onnx" "$dir/models/rule.onnx" "$shape" "$iters")
  local agreement
  agreement=$("$qtune" eval "$model" "$dir.tuned.onnx" $eval_data --json 2> /dev/null | node -e '
    const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const sqnr = r.outputs.map((o) => (typeof o.sqnr_db === "number" ? o.sqnr_db.toFixed(1) : o.sqnr_db));
    const top1 = r.top1_agreement === null ? "" : `top-1 agreement ${r.top1_agreement.toFixed(3)}, `;
    console.log(`${top1}SQNR ${sqnr.join("/")} dB`);')
  rows+=("$(node -e '
    const r = require(process.argv[1]);
    const [name, secs, t, f, r1, vf, vr, acc] = process.argv.slice(2);
    const fmt = (x) => Number(x).toFixed(3);
    console.log(`| ${name} | ${fmt(r.final.speedup_vs_fp32)} | ${fmt(r.final.speedup_vs_rule)} | ` +
      `${r.final.quantized_points}/${r.baseline.rule_points} | ${fmt(r.noise_median)} | ${secs} | ` +
      `${fmt(f)} | ${fmt(r1)} | ${fmt(t)} | ${fmt(1 / vf)} | ${fmt(1 / vr)} | ${acc} |`);
  ' "$PWD/$dir.report.json" "$name" "$elapsed" "$t_ms" "$f_ms" "$r_ms" "$vs_fp32" "$vs_rule" "$agreement")")
}

for name in "${models[@]}"; do
  case $name in
    fmnist_resnet)
      tune fmnist_resnet models/fmnist/fmnist_resnet.onnx input=1x1x28x28 400 \
        "--data models/fmnist/test_2000.npy" --calib models/fmnist/calib_512.npy \
        --calib-samples 128 ;;
    ppocr_cls)
      cls_pre="bgr,resize=48x192,scale=0.00784314,mean=1"
      tune ppocr_cls models/ppocr/ppocr_cls.onnx x=1x3x48x192 100 \
        "--data $images --preprocess $cls_pre" --calib "$images" --preprocess "$cls_pre" ;;
    ppocrv4_det)
      det_pre="bgr,resize=320x320,$imagenet"
      tune ppocrv4_det models/ppocr/ppocrv4_det.onnx x=1x3x320x320 10 \
        "--data $images --preprocess $det_pre" --calib "$images" --preprocess "$det_pre" ;;
    resnet18)
      resnet=$out/resnet18.onnx
      [[ -f $resnet ]] || "$make_model" resnet18 "$resnet" --seed 1
      r18_pre="resize=256,crop=224,$imagenet"
      tune resnet18 "$resnet" input=1x3x224x224 10 "--data $images --preprocess $r18_pre" \
        --calib "$images" --preprocess "$r18_pre" ;;
    *) echo "bench/autotune_ort.sh: unknown model '$name'" >&2; exit 2 ;;
  esac
done

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), threads $threads, mode $mode," \
  "ONNX Runtime $(node -p "require('$PWD/tools/ort/node_modules/onnxruntime-node/package.json').version")"
echo
echo "| model | tuner: tuned vs fp32 | tuner: tuned vs rules | points tuned/rules | noise | tune s | ORT fp32 ms | ORT rules ms | ORT tuned ms | check: vs fp32 | check: vs rules | tuned against fp32 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
