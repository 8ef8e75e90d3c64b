#!/usr/bin/env bash
# Scale-out of `qtune autotune --benchmark redis` (docs/workers.md, docs/performance.md):
# K = 1, 2, 4, 8 local `qtune worker`s, each timing on a SIMULATED remote device: a
# --benchmark-command that sleeps SLEEP seconds per call (as a TensorRT build-and-time
# server would take) and prints a latency that is a function of the candidate model file
# (20 "ms" less per QuantizeLinear node, plus the checksum of its first MiB, the graph's
# nodes, where candidates differ, modulo 97), using no CPU of this machine to speak of. Each K runs from a fresh work dir with --parallel K and K
# workers; prints wall time, the setup before the first measurement, measurements,
# discarded measurements, measurements made ahead by idle workers (and how many of those
# the search did not use), the tuner's own time per candidate (propose, write, upload),
# speed-up and efficiency against K = 1 (on the whole wall time, and on the wall time
# after the setup), and the hash of the tuned model: the same for every K, or the search
# depends on K.
#
#   bench/scale_out.sh [BUILD_DIR] [SLEEP] [MODE] [KS]   (defaults: build 2 quick "1 2 4 8")
#
# Starts its own redis-server on a free loopback port and stops it (and the workers) at
# the end. resnet18 is the architecture with random weights (../shared/models, else written
# by qtune_make_model).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
sleep_s=${2:-2}
mode=${3:-quick}
ks=${4:-1 2 4 8}
[[ $build = /* ]] || build=$PWD/$build
qtune=$build/src/cli/qtune
make_model=$build/tools/make_model/qtune_make_model
out=$PWD/bench/results/scale_out
mkdir -p "$out"
[[ -x $qtune ]] || { echo "bench/scale_out.sh: build qtune first ($qtune)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "bench/scale_out.sh: redis-server missing (scripts/install_deps.sh)" >&2; exit 1; }

images=models/images
imagenet="scale=0.00392157,mean=0.485:0.456:0.406,std=0.229:0.224:0.225"
resnet=$out/resnet18.onnx
if [[ ! -f $resnet ]]; then
  if [[ -f ../shared/models/resnet18/resnet18.onnx ]]; then cp ../shared/models/resnet18/resnet18.onnx "$resnet"
  elif [[ -f bench/results/autotune/resnet18.onnx ]]; then cp bench/results/autotune/resnet18.onnx "$resnet"
  else "$make_model" resnet18 "$resnet" --seed 1; fi
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=redis://127.0.0.1:$port/0
redis_pid=
workers=()
stop_workers() { for p in "${workers[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${workers[@]}"; do wait "$p" 2>/dev/null || true; done; workers=(); }
cleanup() { stop_workers; [[ -n $redis_pid ]] && kill "$redis_pid" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --logfile "$out/redis.log" &
redis_pid=$!
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

device=$out/device.sh
# As on a TensorRT device, int8 is faster: 20 "ms" less per QuantizeLinear node, plus a
# term that is a function of the file (its first MiB: the graph), so schemes differ.
printf '%s\n' "sleep $sleep_s" 'n=$(head -c 1048576 "$1" | cksum | cut -d" " -f1)' \
  'q=$(grep -aoP "\x22\x0eQuantizeLinear" "$1" | wc -l)' \
  'echo "\"median_ms\": $((2000 - 20 * q + n % 97))"' > "$device"

rows=()
base_wall=
base_search=
for k in $ks; do
  queue=scale$k
  dir=$out/k$k
  rm -rf "$dir" "$out"/cache-k$k-w*  # before the workers start: they create their caches
  for i in $(seq "$k"); do
    "$qtune" worker --redis "$url" --queue "$queue" --threads 1 --name "k$k-w$i" \
      --cache-dir "$out/cache-k$k-w$i" --benchmark-command "sh $device {model}" \
      2> "$out/worker-k$k-w$i.log" &
    workers+=($!)
  done
  start=$(date +%s.%N)
  "$qtune" autotune "$resnet" -o "$dir.tuned.onnx" --work-dir "$dir" --mode "$mode" \
    --threads 1 --calib "$images" --preprocess "resize=256,crop=224,$imagenet" --json \
    --benchmark redis --redis "$url" --queue "$queue" --parallel "$k" --timeout 600 \
    > "$dir.report.json" 2> "$dir.log" ||
    { tail -n 20 "$dir.log" >&2; echo "bench/scale_out.sh: autotune K=$k failed" >&2; exit 1; }
  wall=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
  stop_workers
  rm -rf "$out"/cache-k$k-w*  # a fresh cache for every K: no K finds the models already there
  row=$(node -e '
    const [file, k, wall, model, baseWall, baseSearch] = process.argv.slice(1);
    const r = require(file), c = r.counts, t = r.time;
    const w = Number(wall), setup = t.setup_s, search = w - setup;
    const bw = baseWall ? Number(baseWall) : w, bs = baseSearch ? Number(baseSearch) : search;
    const hash = require("crypto").createHash("sha256")
      .update(require("fs").readFileSync(model)).digest("hex").slice(0, 12);
    const f = (x, d) => x.toFixed(d);
    console.log(`${search}\t| ${k} | ${f(w, 1)} | ${f(setup, 1)} | ${c.measured} | ` +
      `${c.speculative_discarded ?? 0} | ${c.speculated ?? 0} (${c.speculated_unused ?? 0}) | ` +
      `${t.generations} | ${f(t.tuner_ms_per_candidate, 0)} | ` +
      `${f(bw / w, 2)} | ${f(bw / w / k, 2)} | ${f(bs / search / k, 2)} | ` +
      `${r.final.speedup_vs_fp32.toFixed(3)} | ${hash} |`);
  ' "$dir.report.json" "$k" "$wall" "$dir.tuned.onnx" "$base_wall" "$base_search")
  if [[ -z $base_wall ]]; then base_wall=$wall; base_search=${row%%$'\t'*}; fi
  rows+=("${row#*$'\t'}")
  echo "${row#*$'\t'}" >&2
done

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); mode $mode, device $sleep_s s per call"
echo
echo "| K | wall s | setup s | measured | discarded | ahead (unused) | generations | tuner ms/candidate | speed-up | efficiency | efficiency after setup | tuned vs fp32 | tuned model |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
