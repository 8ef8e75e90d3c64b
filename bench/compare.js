#!/usr/bin/env node
// Runs qtune and ONNX Runtime side by side on the same models, inputs sizes and thread
// counts, alternating rounds (qtune, ORT, qtune, ORT, ...) so both see the same machine
// noise, and prints per-model medians, the qtune/ORT latency ratio and their geomean.
//
// Usage: node bench/compare.js [--qtune build/src/cli/qtune] [--threads 1,2] [--rounds 3]
//          [--iters 30] [--warmup 5] [--json out.json] [--model NAME=PATH:input=1x3x224x224]...
//          [--variant FLAG]
// A model with several inputs lists their sizes separated by commas
// (NAME=PATH:input=1x512,h=2x1x64,c=2x1x64); inputs not listed keep the model's sizes. Without
// --model: every model in models/ (the recognizer once scripts/fetch_models.sh fetched it)
// and ResNet-18.
// --variant FLAG (e.g. --bf16) adds a third contestant in the same alternation, `qtune bench
// FLAG`, and its median and ratio to qtune's default.
'use strict';
const {execFileSync} = require('child_process');
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const ortBench = path.join(root, 'tools/ort/ort_bench.js');

function defaultModels() {
  const models = [
    {name: 'fmnist_resnet', path: 'models/fmnist/fmnist_resnet.onnx', shape: 'input=1x1x28x28'},
    {name: 'ppocr_cls', path: 'models/ppocr/ppocr_cls.onnx', shape: 'x=1x3x48x192'},
    {name: 'ppocrv4_det', path: 'models/ppocr/ppocrv4_det.onnx', shape: 'x=1x3x640x640'},
    // One 32 ms chunk at 16 kHz with its LSTM state; `sr` random, as for every input.
    {name: 'silero_vad', path: 'models/silero_vad/silero_vad.onnx',
     shape: 'input=1x512,h=2x1x64,c=2x1x64'},
  ];
  const rec = 'models/ppocr/fetched/ppocrv4_rec.onnx';
  if (fs.existsSync(path.join(root, rec))) {
    models.push({name: 'ppocrv4_rec', path: rec, shape: 'x=1x3x48x320'});
  }
  // ResNet-18 from ../shared/models, else the one bench/int8.sh writes with
  // qtune_make_model (or: build/tools/make_model/qtune_make_model resnet18 OUT.onnx).
  const resnet = [path.join(root, '../shared/models/resnet18/resnet18.onnx'),
                  path.join(root, 'build/bench-int8/resnet18.onnx')].find(p => fs.existsSync(p));
  if (resnet) {
    models.push({name: 'resnet18', path: resnet, shape: 'input=1x3x224x224'});
  }
  return models;
}

function parseArgs(argv) {
  const o = {qtune: path.join(root, 'build/src/cli/qtune'), threads: [1, 2], rounds: 3,
             iters: 30, warmup: 5, json: null, models: [], variant: null};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--qtune') o.qtune = argv[++i];
    else if (a === '--threads') o.threads = argv[++i].split(',').map(Number);
    else if (a === '--rounds') o.rounds = Number(argv[++i]);
    else if (a === '--iters') o.iters = Number(argv[++i]);
    else if (a === '--warmup') o.warmup = Number(argv[++i]);
    else if (a === '--json') o.json = argv[++i];
    else if (a === '--variant') o.variant = argv[++i];
    else if (a === '--model') {
      // NAME=PATH:INPUT=SIZES — split at the first '=' and the first ':' after it.
      const arg = argv[++i];
      const eq = arg.indexOf('=');
      const colon = arg.indexOf(':', eq + 1);
      if (eq <= 0 || colon < 0) {
        console.error(`compare.js: --model ${arg}: use NAME=PATH:INPUT=1x3x224x224`);
        process.exit(2);
      }
      o.models.push({name: arg.slice(0, eq), path: arg.slice(eq + 1, colon), shape: arg.slice(colon + 1)});
    } else {
      console.error(`compare.js: unknown argument ${a}`);
      process.exit(2);
    }
  }
  if (o.models.length === 0) o.models = defaultModels();
  return o;
}

function runJson(cmd, args) {
  const out = execFileSync(cmd, args, {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']});
  return JSON.parse(out);
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };
const geomean = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

function main() {
  const o = parseArgs(process.argv.slice(2));
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  console.log(`# qtune vs ONNX Runtime (load average at start ${load}; ${o.rounds} alternating rounds of ${o.iters} runs)\n`);
  const v = o.variant;
  console.log(`| model | threads | qtune median ms | ORT median ms | qtune/ORT |` +
              (v ? ` qtune ${v} ms | ${v} / qtune |` : ''));
  console.log('|---|---|---|---|---|' + (v ? '---|---|' : ''));
  const rows = [];
  for (const threads of o.threads) {
    for (const m of o.models) {
      const q = [], r = [], qv = [];
      for (let round = 0; round < o.rounds; round++) {
        const shapes = m.shape.split(',').flatMap((s) => ['--shape', s]);
        const common = ['--threads', String(threads), '--iters', String(o.iters), '--warmup',
                        String(o.warmup), ...shapes, '--json'];
        q.push(runJson(o.qtune, ['bench', m.path, ...common]).median_ms);
        r.push(runJson('node', [ortBench, m.path, ...common]).median_ms);
        if (v) qv.push(runJson(o.qtune, ['bench', m.path, v, ...common]).median_ms);
      }
      const row = {model: m.name, threads, qtune_ms: median(q), ort_ms: median(r)};
      row.ratio = row.qtune_ms / row.ort_ms;
      if (v) row.variant_ms = median(qv);
      rows.push(row);
      console.log(`| ${row.model} | ${threads} | ${row.qtune_ms.toFixed(3)} | ${row.ort_ms.toFixed(3)} | ${row.ratio.toFixed(2)} |` +
                  (v ? ` ${row.variant_ms.toFixed(3)} | ${(row.variant_ms / row.qtune_ms).toFixed(2)} |` : ''));
    }
  }
  console.log('');
  for (const threads of o.threads) {
    const ratios = rows.filter((x) => x.threads === threads).map((x) => x.ratio);
    console.log(`geomean qtune/ORT at ${threads} thread(s): ${geomean(ratios).toFixed(3)}`);
  }
  if (o.json) fs.writeFileSync(o.json, JSON.stringify({load_average: Number(load), rows}, null, 2));
}

main();
