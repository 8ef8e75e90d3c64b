// MatMulNBits (matmul_nbits.h): reading and checking its weights, the reference kernel
// (dequantize every weight, then a plain double-accumulated product) and its shape function.
#include "runtime/fusion/matmul_nbits.h"

#include <cmath>
#include <string>

#include "runtime/fusion/fused_ops.h"
#include "runtime/reference/registry.h"
#include "runtime/reference/tensor_util.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

using reference::NodeError;
using reference::NodeUnimplemented;

std::string Count(int64_t n) { return std::to_string(n); }

// "scales 'w_scale'": the input's role and the name of the tensor the model gives it.
std::string Named(const ir::Node& node, size_t index, const char* what) {
  const ir::Value* v = index < node.num_inputs() ? node.input(index) : nullptr;
  return std::string(what) + (v == nullptr ? "" : " '" + v->name() + "'");
}

Status CheckCount(const ir::Node& node, const Tensor& t, size_t index, const char* what,
                  DataType dtype, int64_t count, const std::string& expected) {
  if (t.dtype() != dtype) {
    return NodeError(node, Named(node, index, what) + " is " +
                               std::string(DataTypeName(t.dtype())) + "; expected " +
                               std::string(DataTypeName(dtype)) + " " + expected);
  }
  if (t.num_elements() != count) {
    return NodeError(node, Named(node, index, what) + " " + t.DebugString() + " has " +
                               Count(t.num_elements()) + " elements; expected " + expected + " = " +
                               Count(count));
  }
  return Status::Ok();
}

// Code i of a row of `bits`-bit codes packed low bits first.
uint8_t CodeAt(const uint8_t* row, int64_t i, int64_t bits) {
  if (bits == 8) return row[i];
  return static_cast<uint8_t>((row[i / 2] >> (4 * (i % 2))) & 0xF);
}

StatusOr<std::vector<Tensor>> MatMulNBitsReference(const KernelArgs& args) {
  const ir::Node& node = args.node;
  if (args.inputs.empty() || !args.inputs[kNBitsA].is_valid()) {
    return NodeError(node, "input A is missing");
  }
  const Tensor& a = args.inputs[kNBitsA];
  if (a.dtype() != DataType::kFloat32) {
    return NodeUnimplemented(node, "A is " + std::string(DataTypeName(a.dtype())) +
                                       "; only float32 activations are supported");
  }
  ASSIGN_OR_RETURN(LowBitWeights w, ReadLowBitWeights(node, args.inputs));
  const NBitsShape& s = w.shape;
  if (a.rank() < 1 || a.sizes().back() != s.k) {
    return NodeError(node, "A " + a.DebugString() + " does not end in K = " + Count(s.k));
  }
  std::vector<int64_t> out_sizes = a.sizes();
  out_sizes.back() = s.n;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kFloat32, out_sizes));
  const int64_t rows = a.num_elements() / s.k;
  std::vector<float> dequantized(static_cast<size_t>(s.n * s.k));  // [N][K]
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t k = 0; k < s.k; ++k) dequantized[n * s.k + k] = w.weight(n, k);
  }
  const float* x = a.data<float>();
  float* out = y.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t n = 0; n < s.n; ++n) {
      double sum = 0.0;
      const float* wn = dequantized.data() + n * s.k;
      for (int64_t k = 0; k < s.k; ++k) sum += static_cast<double>(x[r * s.k + k]) * wn[k];
      if (!w.bias.empty()) sum += w.bias[n];
      out[r * s.n + n] = static_cast<float>(sum);
    }
  }
  ApplyActivation(ReadActivation(node), out, y.num_elements());
  std::vector<Tensor> result;
  result.push_back(std::move(y));
  return result;
}

StatusOr<std::vector<ValueInfo>> MatMulNBitsShape(const ShapeArgs& args) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(NBitsShape s, ReadNBitsShape(node));
  if (!args.has_input(kNBitsA) || !args.has_input(kNBitsB) || !args.has_input(kNBitsScales)) {
    return ShapeError(node, "needs inputs A, B and scales");
  }
  const ValueInfo& a = args.input(kNBitsA);
  if (a.sizes.empty() || a.sizes.back() != s.k) {
    return ShapeError(node, "A has " + Count(static_cast<int64_t>(a.sizes.size())) +
                                " dimensions and does not end in K = " + Count(s.k));
  }
  if (a.dtype != DataType::kFloat32) {
    return NodeUnimplemented(node, "A is " + std::string(DataTypeName(a.dtype)) +
                                       "; only float32 activations are supported");
  }
  std::vector<int64_t> sizes = a.sizes;
  sizes.back() = s.n;
  return std::vector<ValueInfo>{MakeInfo(DataType::kFloat32, std::move(sizes))};
}

}  // namespace

bool IsMatMulNBits(const ir::Node& node) {
  return node.op_type() == kMatMulNBits &&
         (node.domain() == kMicrosoftDomain || node.domain() == kQtuneDomain);
}

StatusOr<NBitsShape> ReadNBitsShape(const ir::Node& node) {
  NBitsShape s;
  s.k = node.GetInt("K", 0);
  s.n = node.GetInt("N", 0);
  s.bits = node.GetInt("bits", 4);
  s.block = node.GetInt("block_size", 0);
  if (s.k < 1 || s.n < 1) {
    return NodeError(node, "attributes K and N must be positive (K = " + Count(s.k) +
                               ", N = " + Count(s.n) + ")");
  }
  if (s.bits != 4 && s.bits != 8) {
    return NodeUnimplemented(node, "bits = " + Count(s.bits) + "; qtune runs 4 and 8");
  }
  if (s.block < 1 || s.block * s.bits % 8 != 0) {
    return NodeError(node, "block_size " + Count(s.block) + " with bits " + Count(s.bits) +
                               " does not fill whole bytes");
  }
  if (node.domain() == kMicrosoftDomain && (s.block < 16 || (s.block & (s.block - 1)) != 0)) {
    return NodeError(node,
                     "block_size " + Count(s.block) + " is not a power of two of at least 16");
  }
  return s;
}

StatusOr<LowBitWeights> ReadLowBitWeights(const ir::Node& node, std::span<const Tensor> inputs) {
  ASSIGN_OR_RETURN(NBitsShape s, ReadNBitsShape(node));
  auto input = [&](size_t i) -> const Tensor* {
    return i < inputs.size() && inputs[i].is_valid() ? &inputs[i] : nullptr;
  };
  if (input(kNBitsGIdx) != nullptr) {
    return NodeUnimplemented(node,
                             "input g_idx (act-order column permutation) is not "
                             "supported; re-export without act-order");
  }
  const Tensor* b = input(kNBitsB);
  const Tensor* scales = input(kNBitsScales);
  if (b == nullptr || scales == nullptr) return NodeError(node, "inputs B and scales are needed");
  const int64_t kb = s.k_blocks(), blob = s.blob();
  const std::string b_shape = "[" + Count(s.n) + "," + Count(kb) + "," + Count(blob) + "]";
  RETURN_IF_ERROR(CheckCount(node, *b, kNBitsB, "B", DataType::kUint8, s.n * kb * blob, b_shape));
  RETURN_IF_ERROR(CheckCount(node, *scales, kNBitsScales, "scales", DataType::kFloat32, s.n * kb,
                             "N * k_blocks"));
  LowBitWeights w;
  w.shape = s;
  w.codes.resize(static_cast<size_t>(s.n * s.k));
  const uint8_t* packed = b->data<uint8_t>();
  for (int64_t n = 0; n < s.n; ++n) {
    const uint8_t* row = packed + n * kb * blob;  // the blocks of a column are contiguous
    for (int64_t k = 0; k < s.k; ++k) w.codes[n * s.k + k] = CodeAt(row, k, s.bits);
  }
  w.scales.assign(scales->data<float>(), scales->data<float>() + s.n * kb);
  for (int64_t i = 0; i < s.n * kb; ++i) {
    if (!std::isfinite(w.scales[i])) {
      return NodeError(
          node, Named(node, kNBitsScales, "scales") + " element " + Count(i) + " is not finite");
    }
  }
  w.zero_points.assign(static_cast<size_t>(s.n * kb), static_cast<float>(1 << (s.bits - 1)));
  if (const Tensor* zp = input(kNBitsZeroPoints)) {
    if (zp->dtype() == DataType::kFloat32) {
      RETURN_IF_ERROR(CheckCount(node, *zp, kNBitsZeroPoints, "zero_points", DataType::kFloat32,
                                 s.n * kb, "N * k_blocks"));
      w.zero_points.assign(zp->data<float>(), zp->data<float>() + s.n * kb);
      for (float v : w.zero_points) {
        if (!std::isfinite(v)) {
          return NodeError(
              node, Named(node, kNBitsZeroPoints, "zero_points") + " has a non-finite value");
        }
      }
    } else {
      const int64_t row_bytes = (kb * s.bits + 7) / 8;
      RETURN_IF_ERROR(CheckCount(node, *zp, kNBitsZeroPoints, "zero_points", DataType::kUint8,
                                 s.n * row_bytes,
                                 "N * ceil(k_blocks * bits / 8) (packed), or float32"));
      for (int64_t n = 0; n < s.n; ++n) {
        const uint8_t* row = zp->data<uint8_t>() + n * row_bytes;
        for (int64_t j = 0; j < kb; ++j) w.zero_points[n * kb + j] = CodeAt(row, j, s.bits);
      }
    }
  }
  if (const Tensor* bias = input(kNBitsBias)) {
    RETURN_IF_ERROR(CheckCount(node, *bias, kNBitsBias, "bias", DataType::kFloat32, s.n, "N"));
    w.bias.assign(bias->data<float>(), bias->data<float>() + s.n);
  }
  return w;
}

void RegisterMatMulNBitsReference(ReferenceRegistry& registry) {
  registry.Register(std::string(kMicrosoftDomain) + "::" + kMatMulNBits, MatMulNBitsReference);
  registry.Register(std::string(kQtuneDomain) + "::" + kMatMulNBits, MatMulNBitsReference);
}

void RegisterMatMulNBitsShape(ShapeRegistry& registry) {
  registry.Register(kMatMulNBits, MatMulNBitsShape);
}

}  // namespace qtune::runtime
