// Minimal .npy (numpy format 1.0-3.0, little-endian, C order) reader and writer for the
// ONNX Runtime helper scripts.
'use strict';
const fs = require('fs');

const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '<i1': ['int8', Int8Array],
  '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array],
  '<i8': ['int64', BigInt64Array], '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.readUInt32BE(0) !== 0x934e554d || buf.toString('latin1', 4, 6) !== 'PY') {
    throw new Error(`${path}: not a .npy file`);
  }
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
      .map((s) => s.trim()).filter((s) => s.length).map(Number);
  const info = DTYPES[descr];
  if (!info) throw new Error(`${path}: unsupported dtype ${descr}`);
  const offset = start + headerLen;
  const bytes = buf.subarray(offset);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const data = new info[1](copy.buffer);
  return {type: info[0], dims: shape, data: info[0] === 'bool' ? Uint8Array.from(data) : data};
}

function writeNpy(path, type, dims, data) {
  const descr = Object.keys(DTYPES).find((k) => DTYPES[k][0] === type && !k.startsWith('<i1'));
  if (!descr) throw new Error(`cannot write dtype ${type}`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.writeUInt32BE(0x934e554d, 0);
  head.write('PY', 4, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

module.exports = {readNpy, writeNpy};
