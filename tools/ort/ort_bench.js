// Times a model in ONNX Runtime on random inputs, the way `qtune bench` times qtune.
// Usage: node ort_bench.js MODEL [--reference MODEL2] [--threads N] [--warmup W] [--iters N]
//                          [--shape NAME=1x3x224x224 ...] [--json]
// With --reference both models are loaded in this one process and timed alternately
// (MODEL, MODEL2, MODEL2, MODEL, ...), so both see the same machine; MODEL's result is
// printed first, then MODEL2's (what `qtune autotune --benchmark-command` with
// {reference} reads: docs/autotune.md).
'use strict';
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const o = {threads: 1, warmup: 5, iters: 50, shapes: {}, json: false, model: null,
             reference: null};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--threads') o.threads = Number(argv[++i]);
    else if (a === '--warmup') o.warmup = Number(argv[++i]);
    else if (a === '--iters') o.iters = Number(argv[++i]);
    else if (a === '--json') o.json = true;
    else if (a === '--reference') o.reference = argv[++i];
    else if (a === '--shape') {
      const [name, dims] = argv[++i].split('=');
      o.shapes[name] = dims.split('x').map(Number);
    } else o.model = a;
  }
  return o;
}

function randomTensor(type, dims, seed) {
  let s = seed >>> 0;
  const next = () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 4294967296; };
  const n = dims.reduce((a, b) => a * b, 1);
  if (type === 'float32') return new ort.Tensor(type, Float32Array.from({length: n}, () => next() * 2 - 1), dims);
  if (type === 'int64') return new ort.Tensor(type, BigInt64Array.from({length: n}, () => BigInt(Math.floor(next() * 10))), dims);
  throw new Error(`random data for type ${type} is not supported`);
}

async function loadModel(path, o) {
  const session = await ort.InferenceSession.create(path, {
    intraOpNumThreads: o.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  session.inputNames.forEach((name, i) => {
    const meta = session.inputMetadata ? session.inputMetadata[i] : null;
    const dims = o.shapes[name] || (meta && meta.shape) ;
    if (!dims || dims.some((d) => typeof d !== 'number' || d < 0)) {
      throw new Error(`give the sizes of input '${name}' with --shape ${name}=...`);
    }
    feeds[name] = randomTensor(meta && meta.type ? meta.type : 'float32', dims, i + 1);
  });
  return {path, session, feeds, times: []};
}

async function timeOnce(m, keep) {
  const t0 = process.hrtime.bigint();
  await m.session.run(m.feeds);
  if (keep) m.times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}

function report(m, o) {
  const times = m.times.slice().sort((a, b) => a - b);
  const pick = (p) => times[Math.min(times.length - 1, Math.round(p * (times.length - 1)))];
  const result = {model: m.path, threads: o.threads, iters: o.iters, median_ms: pick(0.5),
                  p90_ms: pick(0.9), p99_ms: pick(0.99), min_ms: times[0]};
  if (o.json) console.log(JSON.stringify(result, null, 2));
  else console.log(`${m.path}: latency  median ${result.median_ms.toFixed(3)} ms   p90 ${result.p90_ms.toFixed(3)} ms   min ${result.min_ms.toFixed(3)} ms`);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!o.model) { console.error('usage: node ort_bench.js MODEL [--reference MODEL2] [...]'); process.exit(2); }
  const models = [await loadModel(o.model, o)];
  if (o.reference) models.push(await loadModel(o.reference, o));
  for (let i = 0; i < o.warmup + o.iters; i++) {
    // ABBA order: neither model always runs right after the other.
    const order = i % 2 === 0 ? models : models.slice().reverse();
    for (const m of order) await timeOnce(m, i >= o.warmup);
  }
  for (const m of models) report(m, o);
}

main().catch((e) => { console.error(`ort_bench: ${e.message}`); process.exit(3); });
