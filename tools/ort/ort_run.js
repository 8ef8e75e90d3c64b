// Runs a model in ONNX Runtime and writes each output as OUT_DIR/<output name>.npy.
// Usage: node ort_run.js MODEL OUT_DIR [--threads N] NAME=FILE.npy ...
// Exit codes: 0 ok, 2 usage, 3 the model or an input could not be loaded or run.
'use strict';
const path = require('path');
const fs = require('fs');
const ort = require('onnxruntime-node');
const {readNpy, writeNpy} = require('./npy');

async function main() {
  const args = process.argv.slice(2);
  let threads = 1;
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--threads') threads = Number(args[++i]);
    else rest.push(args[i]);
  }
  if (rest.length < 2) {
    console.error('usage: node ort_run.js MODEL OUT_DIR [--threads N] NAME=FILE.npy ...');
    process.exit(2);
  }
  const [model, outDir, ...feedsArgs] = rest;
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
    // QTUNE_ORT_OPT_LEVEL=basic: ORT's CPU QDQ fusion turns FP8 Q/DQ around Conv into
    // QLinearConv, which has no float8 kernel; FP8 models run at 'basic'.
    graphOptimizationLevel: process.env.QTUNE_ORT_OPT_LEVEL || 'all',
  });
  const feeds = {};
  for (const arg of feedsArgs) {
    const eq = arg.indexOf('=');
    const arr = readNpy(arg.slice(eq + 1));
    feeds[arg.slice(0, eq)] = new ort.Tensor(arr.type, arr.data, arr.dims);
  }
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, {recursive: true});
  for (const name of session.outputNames) {
    const t = results[name];
    const safe = name.replace(/[^A-Za-z0-9_.-]/g, '_');
    writeNpy(path.join(outDir, `${safe}.npy`), t.type, t.dims, t.data);
  }
}

main().catch((e) => {
  console.error(`ort_run: ${e.message}`);
  process.exit(3);
});
