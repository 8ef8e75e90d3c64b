#!/usr/bin/env bash
# Batch-1 MatMul stack with int4 weights (issue 27): the fp32 stack of bench/matmul_b1.sh
# (4 x MatMul 2048x2048 + bias Add + Relu) against the same weights in int4 (round to
# nearest, symmetric, one scale per 32 rows of K), in two files:
#   int4_qdq   opset 21 INT4 initializer -> DequantizeLinear(block_size) -> MatMul
#   nbits      com.microsoft MatMulNBits (ONNX Runtime's int4 fast path)
# and int8 weight-only (one scale per output channel, DequantizeLinear axis 1 -> MatMul).
#
#   1. Builds qtune and qtune_make_model (ninja; a no-op when they are up to date).
#   2. Writes the four models into BUILD/bench-lowbit/ (qtune_make_model matmul_stack,
#      int4_stack, nbits_stack, int8_stack).
#   3. qtune fp32 against qtune int4 (QDQ file), alternating `qtune bench` rounds: the
#      medians and their ratio (the issue's goal: int4 <= 0.35x of fp32).
#   4. bench/compare.js on all four (qtune and ONNX Runtime alternating per model).
#
# Usage: bench/lowbit_b1.sh [--rounds N] [--iters N] [--warmup N] [--threads 1,2]
#                           [--layers N] [--width N] [--block N] [--build DIR] [--no-build]
# --no-build uses the binaries as they are (when another build holds the tree).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

rounds=7 iters=100 warmup=10 threads=1 layers=4 width=2048 block=32 build=build no_build=0
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --iters) iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --threads) threads=$2; shift ;;
    --layers) layers=$2; shift ;;
    --width) width=$2; shift ;;
    --block) block=$2; shift ;;
    --build) build=$2; shift ;;
    --no-build) no_build=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "lowbit_b1.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

[[ $no_build == 1 ]] || ninja -C "$build" qtune qtune_make_model >/dev/null
out=$root/$build/bench-lowbit
mkdir -p "$out"
make_model=$build/tools/make_model/qtune_make_model
tag=${layers}x${width}
fp32=$out/fp32_$tag.onnx int4=$out/int4_qdq_${tag}_b$block.onnx nbits=$out/nbits_${tag}_b$block.onnx
int8=$out/int8_qdq_$tag.onnx
"$make_model" matmul_stack "$fp32" --layers "$layers" --width "$width" --overwrite >/dev/null
"$make_model" int4_stack "$int4" --layers "$layers" --width "$width" --block "$block" \
  --overwrite >/dev/null
"$make_model" nbits_stack "$nbits" --layers "$layers" --width "$width" --block "$block" \
  --overwrite >/dev/null
"$make_model" int8_stack "$int8" --layers "$layers" --width "$width" --overwrite >/dev/null
ls -l "$fp32" "$int4" "$nbits" "$int8" | awk '{printf "%10d bytes  %s\n", $5, $NF}'

first_threads=${threads%%,*}
median_ms() {
  "$build/src/cli/qtune" bench "$1" --threads "$first_threads" --iters "$iters" \
    --warmup "$warmup" --shape "x=1x$width" --json |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).median_ms))'
}
f=() q=()
for ((r = 0; r < rounds; r++)); do
  f+=("$(median_ms "$fp32")")
  q+=("$(median_ms "$int4")")
done
node -e '
  const [f, q, load] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2]), process.argv[3]];
  const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };
  console.log(`\n# qtune fp32 vs qtune int4 (QDQ), ${f.length} alternating rounds, load average ${load}`);
  console.log(`fp32 ${med(f).toFixed(3)} ms, int4 ${med(q).toFixed(3)} ms, int4/fp32 ${(med(q) / med(f)).toFixed(2)}\n`);
' "[$(IFS=,; echo "${f[*]}")]" "[$(IFS=,; echo "${q[*]}")]" "$(cut -d' ' -f1 /proc/loadavg)"

node bench/compare.js --qtune "$build/src/cli/qtune" --threads "$threads" --rounds "$rounds" \
  --iters "$iters" --warmup "$warmup" --model "fp32=$fp32:x=1x$width" \
  --model "int4_qdq=$int4:x=1x$width" --model "matmul_nbits=$nbits:x=1x$width" \
  --model "int8_qdq=$int8:x=1x$width"
