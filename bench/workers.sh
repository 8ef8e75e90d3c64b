#!/usr/bin/env bash
# qtune autotune of resnet18 measured by `qtune worker`s over Redis (docs/workers.md):
# the in-process back end, then 1 and 2 local workers (1 thread each), then 2 workers with
# --parallel 2 (two jobs in flight), each from a fresh work dir. Prints wall time,
# measurements (and those dropped after an adoption with --parallel) and measurements per
# second as a Markdown table (docs/performance.md quotes it). Real latencies are noisy, so
# the runs may tune differently; that --parallel gives the --parallel 1 result is tested
# with a deterministic benchmark (tests/workers).
#
# Then the same pair (2 workers, --parallel 1 and 2) with workers that measure on a
# simulated remote device (`--benchmark-command`: 0.2 s of waiting per call and a latency
# that is a function of the model file, no CPU of this machine): the tuner's own share
# (export, plan dedup, upload) against measurements that do not compete with it for cores,
# and two runs that must end with the same placement (the last column).
#
#   bench/workers.sh [BUILD_DIR] [MODE]      (defaults: build default)
#
# Starts its own redis-server on a free loopback port and stops it (and the workers) at
# the end. resnet18 is the architecture with random weights written by qtune_make_model.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mode=${2:-default}
qtune=$PWD/$build/src/cli/qtune
make_model=$build/tools/make_model/qtune_make_model
out=bench/results/workers
mkdir -p "$out"
[[ -x $qtune ]] || { echo "bench/workers.sh: build qtune first ($qtune)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "bench/workers.sh: redis-server missing (scripts/install_deps.sh)" >&2; exit 1; }

images=models/images
imagenet="scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225"
resnet=$out/resnet18.onnx
if [[ ! -f $resnet ]]; then  # the model bench/autotune.sh tunes, when it is there
  if [[ -f bench/results/autotune/resnet18.onnx ]]; then cp bench/results/autotune/resnet18.onnx "$resnet"
  else "$make_model" resnet18 "$resnet" --seed 1; fi
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=redis://127.0.0.1:$port/0
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --logfile "$PWD/$out/redis.log" &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

rows=()
run() {
  local name=$1; shift
  local dir=$out/$name
  rm -rf "$dir"
  local start=$SECONDS
  "$qtune" autotune "$resnet" -o "$dir.tuned.onnx" --work-dir "$dir" --mode "$mode" --threads 1 \
    --calib "$images" --preprocess "resize=256,crop=224,$imagenet" --json "$@" \
    > "$dir.report.json" 2> "$dir.log" ||
    { tail -n 20 "$dir.log" >&2; echo "bench/workers.sh: autotune $name failed" >&2; exit 1; }
  local elapsed=$((SECONDS - start))
  rows+=("$(node -e '
    const r = require(process.argv[1]);
    const c = r.counts, s = Number(process.argv[3]);
    const best = (x) => x.patterns.map((p) => p.best_scheme).join(",");
    const same = process.argv[4] ? (best(r) === best(require(process.argv[4])) ? "yes" : "NO") : "-";
    console.log(`| ${process.argv[2]} | ${s} | ${c.measured} | ${c.speculative_discarded ?? 0} | ` +
      `${(c.measured / s).toFixed(2)} | ${r.final.speedup_vs_fp32.toFixed(3)} | ${same} |`);
  ' "$PWD/$dir.report.json" "$name" "$elapsed" "${same_as:-}")")
}

# start_worker NAME QUEUE [worker flags...]
start_worker() {
  local name=$1 queue=$2; shift 2
  "$qtune" worker --redis "$url" --queue "$queue" --threads 1 --name "$name" \
    --cache-dir "$PWD/$out/cache-$name" "$@" 2> "$out/worker-$name.log" &
  pids+=($!)
}

run inprocess
start_worker w1 bench
run redis-1-worker --benchmark redis --redis "$url" --queue bench
start_worker w2 bench
run redis-2-workers --benchmark redis --redis "$url" --queue bench
run redis-2-workers-parallel-2 --benchmark redis --redis "$url" --queue bench --parallel 2

device=$PWD/$out/device.sh
printf '%s\n' 'sleep 0.2' 'n=$(cksum < "$1" | cut -d" " -f1)' \
  'echo "\"median_ms\": $((100 + n % 997))"' > "$device"
start_worker d1 device --benchmark-command "sh $device {model}"
start_worker d2 device --benchmark-command "sh $device {model}"
run device-2-workers --benchmark redis --redis "$url" --queue device
same_as=$PWD/$out/device-2-workers.report.json
run device-2-workers-parallel-2 --benchmark redis --redis "$url" --queue device --parallel 2

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores, mode $mode"
echo
echo "| back end | wall s | measured | of which dropped | measurements/s | tuned vs fp32 | same placement as --parallel 1 |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
