#!/usr/bin/env bash
# Latency under contention (issue 26, part 3; docs/performance.md "Threads under load"):
# qtune and ONNX Runtime on ResNet-18 at 2 threads (same model, same input, alternating
# rounds), first on the machine as it is, then while a busy loop holds one core (an
# unpinned `while :; do :; done`: what another process on a shared machine does).
# Prints p50/p90/p99 per contestant (the median over rounds of each round's percentile)
# and qtune/ORT ratios. qtune runs with its default thread policy (adaptive) unless
# --policy fixed is given; --policy both adds fixed as a third contestant.
#
# Usage: bench/contention.sh [--rounds N] [--iters N] [--threads N] [--policy adaptive|fixed|both]
#                            [--build DIR] [--model PATH --shape NAME=SIZES]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

rounds=3 iters=100 threads=2 policy=both build=build model= shape=
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --iters) iters=$2; shift ;;
    --threads) threads=$2; shift ;;
    --policy) policy=$2; shift ;;
    --build) build=$2; shift ;;
    --model) model=$2; shift ;;
    --shape) shape=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "contention.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case $policy in adaptive|fixed|both) ;; *) echo "contention.sh: --policy adaptive|fixed|both" >&2; exit 2 ;; esac

ninja -C "$build" qtune qtune_make_model >/dev/null
qtune=$build/src/cli/qtune
if [[ -z $model ]]; then
  model=$build/bench-contention/resnet18.onnx
  mkdir -p "$(dirname "$model")"
  [[ -f $model ]] || "$build/tools/make_model/qtune_make_model" resnet18 "$model" >/dev/null
  shape=input=1x3x224x224
fi
[[ -n $shape ]] || { echo "contention.sh: --model needs --shape NAME=SIZES" >&2; exit 2; }
out=$(mktemp -d)
busy_pid=
cleanup() { [[ -n $busy_pid ]] && kill "$busy_pid" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT

policies=()
[[ $policy == both || $policy == adaptive ]] && policies+=(adaptive)
[[ $policy == both || $policy == fixed ]] && policies+=(fixed)

measure() {  # $1 = condition label
  for ((r = 0; r < rounds; r++)); do
    for p in "${policies[@]}"; do
      "$qtune" bench "$model" --shape "$shape" --threads "$threads" --thread-policy "$p" \
        --warmup 10 --iters "$iters" --json > "$out/$1.qtune-$p.$r.json"
    done
    node tools/ort/ort_bench.js "$model" --shape "$shape" --threads "$threads" --warmup 10 \
      --iters "$iters" --json > "$out/$1.ort.$r.json"
  done
}

echo "model $model, $threads threads, $rounds rounds x $iters runs; $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
measure quiet
sh -c 'while :; do :; done' &
busy_pid=$!
sleep 1
measure busy
kill "$busy_pid"; busy_pid=

python3 - "$out" "${policies[@]}" <<'PY'
import glob, json, statistics, sys
out, policies = sys.argv[1], sys.argv[2:]
def stat(cond, who, key):
    vals = [json.load(open(f))[key] for f in sorted(glob.glob(f"{out}/{cond}.{who}.*.json"))]
    return statistics.median(vals)
print("| condition | contestant | p50 ms | p90 ms | p99 ms | p90 / ORT p90 |")
print("|---|---|---|---|---|---|")
for cond in ("quiet", "busy"):
    ort90 = stat(cond, "ort", "p90_ms")
    for who in [f"qtune-{p}" for p in policies] + ["ort"]:
        p50, p90, p99 = (stat(cond, who, k) for k in ("median_ms", "p90_ms", "p99_ms"))
        print(f"| {cond} | {who} | {p50:.2f} | {p90:.2f} | {p99:.2f} | {p90 / ort90:.2f} |")
PY
