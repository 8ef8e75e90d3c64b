// Minimal reader for serialized onnx.TensorProto files (the input_N.pb / output_N.pb of
// ONNX backend tests), producing {type, dims, data} in onnxruntime-node's typed arrays.
// Handles raw_data and the typed repeated fields (float_data, int32_data, string_data,
// int64_data, double_data, uint64_data). Throws for types onnxruntime-node cannot hold
// (bfloat16, float8, complex) and for external data.
'use strict';
const fs = require('fs');

// onnx.TensorProto.DataType -> [onnxruntime-node type, typed array, repeated field]
const TYPES = {
  1: ['float32', Float32Array, 'float'], 2: ['uint8', Uint8Array, 'int32'],
  3: ['int8', Int8Array, 'int32'], 4: ['uint16', Uint16Array, 'int32'],
  5: ['int16', Int16Array, 'int32'], 6: ['int32', Int32Array, 'int32'],
  7: ['int64', BigInt64Array, 'int64'], 8: ['string', null, 'string'],
  9: ['bool', Uint8Array, 'int32'], 10: ['float16', Uint16Array, 'int32'],
  11: ['float64', Float64Array, 'double'], 12: ['uint32', Uint32Array, 'uint64'],
  13: ['uint64', BigUint64Array, 'uint64'],
};
const UNSUPPORTED = {
  14: 'complex64', 15: 'complex128', 16: 'bfloat16', 17: 'float8e4m3fn', 18: 'float8e4m3fnuz',
  19: 'float8e5m2', 20: 'float8e5m2fnuz', 21: 'uint4', 22: 'int4', 23: 'float4e2m1',
};

class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  done() { return this.pos >= this.buf.length; }
  varint() {  // as BigInt: int64 fields need all 64 bits
    let result = 0n, shift = 0n;
    for (;;) {
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  }
  bytes() {
    const n = Number(this.varint());
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}

// Reads a repeated scalar field, packed (wire 2) or not, appending to `out`.
function readRepeated(r, wire, kind, out) {
  const one = (rr) => {
    if (kind === 'float') { const v = rr.buf.readFloatLE(rr.pos); rr.pos += 4; return v; }
    if (kind === 'double') { const v = rr.buf.readDoubleLE(rr.pos); rr.pos += 8; return v; }
    return rr.varint();
  };
  if (wire === 2) {
    const sub = new Reader(r.bytes());
    while (!sub.done()) out.push(one(sub));
  } else {
    out.push(one(r));
  }
}

function parseTensorProto(buf) {
  const r = new Reader(buf);
  const t = {dims: [], dataType: 0, name: '', raw: null, float: [], int32: [], int64: [],
    double: [], uint64: [], string: [], external: false};
  while (!r.done()) {
    const key = Number(r.varint());
    const field = key >> 3, wire = key & 7;
    if (field === 1) readRepeated(r, wire, 'int', t.dims);
    else if (field === 2) t.dataType = Number(r.varint());
    else if (field === 4) readRepeated(r, wire, 'float', t.float);
    else if (field === 5) readRepeated(r, wire, 'int', t.int32);
    else if (field === 6) t.string.push(Buffer.from(r.bytes()).toString('utf8'));
    else if (field === 7) readRepeated(r, wire, 'int', t.int64);
    else if (field === 8) t.name = Buffer.from(r.bytes()).toString('utf8');
    else if (field === 9) t.raw = r.bytes();
    else if (field === 10) readRepeated(r, wire, 'double', t.double);
    else if (field === 11) readRepeated(r, wire, 'int', t.uint64);
    else if (field === 13) { t.external = true; r.skip(wire); }
    else r.skip(wire);
  }
  return t;
}

// Turns the int32_data varints (sign-extended to 64 bits for negatives) into `Array`'s
// element type.
function fromVarints(values, Array) {
  const out = new Array(values.length);
  const big = Array === BigInt64Array || Array === BigUint64Array;
  for (let i = 0; i < values.length; i++) {
    if (big) out[i] = Array === BigInt64Array ? BigInt.asIntN(64, values[i]) : values[i];
    else out[i] = Number(BigInt.asIntN(64, values[i]));
  }
  return out;
}

// Reads `path` as a TensorProto: {name, type, dims, data}.
function readTensorProto(path) {
  const t = parseTensorProto(fs.readFileSync(path));
  if (t.external) throw new Error(`${path}: external data`);
  if (UNSUPPORTED[t.dataType]) {
    throw new Error(`${UNSUPPORTED[t.dataType]} tensors are not supported by onnxruntime-node`);
  }
  const info = TYPES[t.dataType];
  if (!info) throw new Error(`${path}: data type ${t.dataType} is not a tensor type we read`);
  const [type, Array, field] = info;
  const dims = t.dims.map(Number);
  let data;
  if (type === 'string') {
    data = t.string;
  } else if (t.raw !== null) {
    const copy = new Uint8Array(t.raw.length);
    copy.set(t.raw);
    data = new Array(copy.buffer, 0, t.raw.length / Array.BYTES_PER_ELEMENT);
  } else if (field === 'float') {
    data = Float32Array.from(t.float);
  } else if (field === 'double') {
    data = Float64Array.from(t.double);
  } else {
    data = fromVarints(field === 'int64' ? t.int64 : field === 'uint64' ? t.uint64 : t.int32,
        Array);
  }
  return {name: t.name, type, dims, data};
}

module.exports = {readTensorProto};
