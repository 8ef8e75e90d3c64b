// Runs every ONNX backend test of Debian's libonnx-testdata through ONNX Runtime and
// writes one line per test: `<folder>/<test> PASS|FAIL|ERROR <short reason>`.
// conformance_node_test reads the result (tests/conformance/ort_results.txt) as the
// yardstick: a test ORT passes and qtune does not needs a reason in
// tests/conformance/unsupported_reasons.txt.
//
// Usage: node conformance_ort.js [--root DIR] [--out FILE] [--filter SUBSTRING] [FOLDER...]
//   FOLDER defaults to node pytorch-converted pytorch-operator simple; --root defaults to
//   /usr/share/libonnx-testdata/data; --out defaults to stdout.
// PASS: every data set's outputs match output_N.pb with the runner's tolerances
// (rtol 1e-3, atol 1e-7 for floating point, NaN == NaN; everything else exact).
// FAIL: ORT ran and some output differs. ERROR: ORT refused the model or the run, or the
// test needs something onnxruntime-node cannot express (sequence/optional feeds, bfloat16,
// float8, complex tensors).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const {readTensorProto} = require('./tensor_proto');

const RTOL = 1e-3;
const ATOL = 1e-7;

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function asNumbers(type, data) {
  if (type === 'float16' && data instanceof Uint16Array) return Array.from(data, halfToFloat);
  return data;
}

// '' when `actual` (an ort.Tensor) matches `expected` ({type, dims, data}).
function compare(actual, expected) {
  if (actual.type !== expected.type) return `type ${actual.type}, expected ${expected.type}`;
  const dims = Array.from(actual.dims, Number);
  if (dims.join(',') !== expected.dims.join(',')) {
    return `sizes [${dims}], expected [${expected.dims}]`;
  }
  const floating = ['float32', 'float64', 'float16'].includes(actual.type);
  const a = asNumbers(actual.type, actual.data), e = asNumbers(expected.type, expected.data);
  if (a.length !== e.length) return `${a.length} elements, expected ${e.length}`;
  for (let i = 0; i < e.length; i++) {
    let ok;
    if (floating) {
      const x = Number(a[i]), y = Number(e[i]);
      ok = (Number.isNaN(x) && Number.isNaN(y)) || x === y ||
          (Number.isFinite(y) && Math.abs(x - y) <= ATOL + RTOL * Math.abs(y));
    } else {
      ok = a[i] === e[i] || (actual.type === 'bool' && !a[i] === !e[i]);
    }
    if (!ok) return `element ${i}: ${a[i]}, expected ${e[i]}`;
  }
  return '';
}

function dataSets(dir) {
  return fs.readdirSync(dir).filter((f) => f.startsWith('test_data_set_')).sort()
      .map((f) => path.join(dir, f));
}

function numbered(dir, prefix) {
  const files = [];
  for (let i = 0; fs.existsSync(path.join(dir, `${prefix}_${i}.pb`)); i++) {
    files.push(path.join(dir, `${prefix}_${i}.pb`));
  }
  return files;
}

function shortReason(message) {
  const line = String(message).split('\n').find((l) => l.trim().length) || 'error';
  return line.replace(/Load model from \S+ failed:/, '')
      .replace(/\/onnxruntime_src\/\S+:\d+ /g, '')
      .replace(/\s+/g, ' ').trim().slice(0, 160);
}

// -> [verdict, reason]
async function runTest(dir) {
  let session;
  try {
    session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
        {intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential'});
  } catch (e) {
    return ['ERROR', `create: ${shortReason(e.message)}`];
  }
  try {
    const inMeta = session.inputMetadata, outMeta = session.outputMetadata;
    const nonTensor = [...inMeta, ...outMeta].filter((m) => !m.isTensor).map((m) => m.name);
    if (nonTensor.length) {
      return ['ERROR', `onnxruntime-node cannot feed or return sequence/map/optional values ` +
          `(${nonTensor.join(', ')})`];
    }
    for (const set of dataSets(dir)) {
      const feeds = {};
      const inputs = numbered(set, 'input');
      for (let i = 0; i < inputs.length; i++) {
        const t = readTensorProto(inputs[i]);
        const name = session.inputNames.includes(t.name) ? t.name : session.inputNames[i];
        if (name === undefined) return ['ERROR', `data has more inputs than the model`];
        feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
      }
      const results = await session.run(feeds);
      const outputs = numbered(set, 'output');
      if (outputs.length !== session.outputNames.length) {
        return ['ERROR', `${outputs.length} expected outputs, model has ` +
            `${session.outputNames.length}`];
      }
      for (let i = 0; i < outputs.length; i++) {
        const name = session.outputNames[i];
        const diff = compare(results[name], readTensorProto(outputs[i]));
        if (diff) return ['FAIL', `${path.basename(set)} output '${name}': ${diff}`];
      }
    }
    return ['PASS', ''];
  } catch (e) {
    return ['ERROR', shortReason(e.message)];
  } finally {
    await session.release();
  }
}

async function main() {
  const args = process.argv.slice(2);
  let root = '/usr/share/libonnx-testdata/data', out = null, filter = '';
  const folders = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--root') root = args[++i];
    else if (args[i] === '--out') out = args[++i];
    else if (args[i] === '--filter') filter = args[++i];
    else folders.push(args[i]);
  }
  if (!folders.length) folders.push('node', 'pytorch-converted', 'pytorch-operator', 'simple');
  ort.env.logLevel = 'fatal';
  const lines = [
    '# ONNX Runtime ' + (ort.env.versions?.node || require('onnxruntime-node/package.json').version) +
        ' (onnxruntime-node) on Debian libonnx-testdata; generated by',
    '#   node tools/ort/conformance_ort.js --out tests/conformance/ort_results.txt',
    '# <folder>/<test> PASS|FAIL|ERROR <short reason>',
  ];
  const counts = {};
  for (const folder of folders) {
    const base = path.join(root, folder);
    const tests = fs.readdirSync(base).filter((t) => t.includes(filter) &&
        fs.existsSync(path.join(base, t, 'model.onnx'))).sort();
    for (const test of tests) {
      const [verdict, reason] = await runTest(path.join(base, test));
      const line = `${folder}/${test} ${verdict}${reason ? ' ' + reason : ''}`;
      lines.push(line);
      counts[`${folder} ${verdict}`] = (counts[`${folder} ${verdict}`] || 0) + 1;
      if (out) process.stderr.write(line + '\n');
    }
  }
  const text = lines.join('\n') + '\n';
  if (out) fs.writeFileSync(out, text); else process.stdout.write(text);
  process.stderr.write(JSON.stringify(counts) + '\n');
}

main().catch((e) => {
  console.error(`conformance_ort: ${e.message}`);
  process.exit(3);
});
