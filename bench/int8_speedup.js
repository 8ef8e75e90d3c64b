#!/usr/bin/env node
// qtune's own int8 speedup: alternating rounds (fp32, int8, fp32, ...) of `qtune bench` on
// two files of one model, per-thread-count medians, a markdown table on stdout and JSON.
// Used by bench/int8.sh and bench/interop_qdq.sh. Inputs come from the environment:
// QTUNE (binary), FP32 and INT8 (models, input `input` 1x3x224x224), THREADS (e.g. 1,2),
// ROUNDS, ITERS, WARMUP, JSON (output file), INT8_LABEL (the int8 column's heading).
'use strict';
const {execFileSync} = require('child_process');
const fs = require('fs');
const e = process.env;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };
const bench = (model, threads) => JSON.parse(execFileSync(e.QTUNE, ['bench', model,
    '--threads', String(threads), '--iters', e.ITERS, '--warmup', e.WARMUP,
    '--shape', 'input=1x3x224x224', '--json'], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']})).median_ms;
const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
console.log(`(load average at start ${load}; ${e.ROUNDS} alternating rounds of ${e.ITERS} runs)\n`);
console.log(`| threads | fp32 median ms | ${e.INT8_LABEL || 'int8'} median ms | int8 speedup (fp32/int8) |`);
console.log('|---|---|---|---|');
const rows = [];
for (const threads of e.THREADS.split(',').map(Number)) {
  const fp32 = [], int8 = [];
  for (let r = 0; r < Number(e.ROUNDS); r++) {
    fp32.push(bench(e.FP32, threads));
    int8.push(bench(e.INT8, threads));
  }
  const row = {threads, fp32_ms: median(fp32), int8_ms: median(int8)};
  row.speedup = row.fp32_ms / row.int8_ms;
  rows.push(row);
  console.log(`| ${threads} | ${row.fp32_ms.toFixed(3)} | ${row.int8_ms.toFixed(3)} | ${row.speedup.toFixed(2)}x |`);
}
fs.writeFileSync(e.JSON, JSON.stringify({load_average: Number(load), rows}, null, 2));
