#!/usr/bin/env bash
# The `quantize --auto --effective-bits` frontier with the block formats (issue 27) on the
# bundled Fashion-MNIST ResNet: for each budget, the bits chosen, the formats, top-1 on
# the 2000 held-out images (qtune eval), the file size and qtune's latency (qtune bench,
# batch 32, rounds alternating over the models; medians). fp32 and the all-int8 recipe
# are the reference rows.
#
# Usage: bench/auto_lowbit_frontier.sh [--budgets "4.6 5 6 7 8"] [--rounds N] [--iters N]
#                                      [--threads N] [--build DIR]
# Candidates: int4, nvfp4, int8, mxfp8, fp32 (recipe int8_residual). Prints a markdown table.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

budgets="4.6 5 5.5 6 7 8" rounds=5 iters=50 threads=1 build=build
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budgets) budgets=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --iters) iters=$2; shift ;;
    --threads) threads=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "auto_lowbit_frontier.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

qtune=$build/src/cli/qtune
[[ -x $qtune ]] || { echo "auto_lowbit_frontier.sh: $qtune not built (make build)" >&2; exit 1; }
m=models/fmnist
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

names=(fp32 int8) files=("$m/fmnist_resnet.onnx" "$out/int8.onnx") bits=(32 8) chosen=("all fp32" "int8_residual")
"$qtune" quantize "$m/fmnist_resnet.onnx" -o "$out/int8.onnx" --calib "$m/calib_512.npy" \
  --recipe int8_residual --threads "$threads" --quiet
for b in $budgets; do
  f=$out/auto_$b.onnx
  "$qtune" quantize "$m/fmnist_resnet.onnx" -o "$f" --calib "$m/calib_512.npy" \
    --recipe int8_residual --auto --candidate-formats int4,nvfp4,int8,mxfp8,fp32 \
    --effective-bits "$b" --threads "$threads" --json >"$out/auto_$b.json" 2>/dev/null
  names+=("auto $b") files+=("$f")
  # The effective bits chosen and each group's format ("l3 int4" for the group of /l3/c1/Conv).
  read -r chosen_bits formats < <(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["auto"]
print("%.2f" % a["effective_bits"],
      ", ".join(g["nodes"][0].split("/")[1] + " " + g["format"] for g in a["groups"]))
' "$out/auto_$b.json")
  bits+=("$chosen_bits") chosen+=("$formats")
done

declare -A ms
for ((r = 0; r < rounds; r++)); do
  for i in "${!files[@]}"; do
    t=$("$qtune" bench "${files[$i]}" --shape input=32x1x28x28 --threads "$threads" \
      --thread-policy fixed --iters "$iters" --json | grep '"median_ms"' |
      sed -E 's/.*"median_ms": *([0-9.]+).*/\1/')
    ms[$i]="${ms[$i]:-} $t"
  done
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), threads $threads, $rounds rounds x $iters runs"
echo
echo "| model | effective bits | formats (groups) | top-1 (2000 held-out) | file | qtune ms (batch 32) |"
echo "|---|---|---|---|---|---|"
for i in "${!files[@]}"; do
  acc=$("$qtune" eval "$m/fmnist_resnet.onnx" "${files[$i]}" --data "$m/test_2000.npy" \
    --labels "$m/test_2000_labels.npy" --no-progress 2>&1 | awk '/^accuracy quantized/{print $3}')
  size=$(stat -c %s "${files[$i]}")
  printf '| %s | %s | %s | %s | %d KB | %s |\n' "${names[$i]}" "${bits[$i]}" "${chosen[$i]}" \
    "$acc" $((size / 1024)) "$(median "${ms[$i]}")"
done
