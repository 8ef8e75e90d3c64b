// MatMulInteger and QLinearMatMul reference kernels (contract: quant_kernels.h), with
// numpy MatMul semantics (1-D operands promoted, batch dimensions broadcast).
//
// Zero points (and QLinearMatMul's scales) apply per tensor (one element), per row of A /
// per column of B (a 1-D tensor of M / N elements), or per row / column of every batch
// matrix (A: [..., M, 1], B: [..., 1, N], broadcasting to the operand). The products
// (a - a_zp) * (b - b_zp) accumulate exactly in int64; MatMulInteger stores int32,
// QLinearMatMul scales by a_scale * b_scale (in double, rounded once to float) and
// requantizes with y_scale / y_zero_point.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/reference/nn_util.h"
#include "runtime/reference/quant_integer_accumulate.h"
#include "runtime/reference/quant_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::quant {
namespace {

using reference::Bracketed;
using reference::NodeError;

// An operand as MatMul sees it: [batch..., rows, cols] (1-D promoted).
struct Operand {
  std::vector<int64_t> sizes;
  std::vector<int64_t> batch;
  int64_t rows = 0, cols = 0;
};

Operand Promote(const Tensor& t, bool is_a) {
  Operand op;
  op.sizes = t.sizes();
  if (t.rank() == 1) op.sizes.insert(is_a ? op.sizes.begin() : op.sizes.end(), 1);
  op.batch.assign(op.sizes.begin(), op.sizes.end() - 2);
  op.rows = op.sizes[op.sizes.size() - 2];
  op.cols = op.sizes.back();
  return op;
}

// For each line of an operand (A: every row, B: every column of every batch matrix, in
// order), the element of `param` that applies to it.
StatusOr<std::vector<int64_t>> LineParamIndex(const ir::Node& node, const Operand& op,
                                              const std::vector<int64_t>& param, bool per_row,
                                              const char* what) {
  const int64_t batches = nn::Product(op.batch);
  const int64_t per_matrix = per_row ? op.rows : op.cols;
  std::vector<int64_t> index(batches * per_matrix, 0);
  if (nn::Product(param) == 1 && param.size() <= 1) return index;
  const std::string expected =
      per_row ? "one element, [M] or [..., M, 1]" : "one element, [N] or [..., 1, N]";
  if (param.size() == 1) {
    if (param[0] != per_matrix) {
      return NodeError(node, std::string(what) + " is " + Bracketed(param) + "; expected " +
                                 expected + " for an operand " + Bracketed(op.sizes));
    }
    for (size_t line = 0; line < index.size(); ++line) index[line] = line % per_matrix;
    return index;
  }
  std::vector<int64_t> strides;
  const size_t rank = op.sizes.size();
  const bool across_is_one = param.size() >= 2 && param[param.size() - (per_row ? 1 : 2)] == 1;
  if (param.size() > rank || !across_is_one || !nn::BroadcastStrides(param, op.sizes, &strides)) {
    return NodeError(node, std::string(what) + " is " + Bracketed(param) + "; expected " +
                               expected + " for an operand " + Bracketed(op.sizes));
  }
  std::vector<int64_t> batch_index(op.batch.size(), 0);
  for (int64_t b = 0; b < batches; ++b, nn::NextIndex(batch_index, op.batch)) {
    int64_t base = 0;
    for (size_t d = 0; d < batch_index.size(); ++d) base += batch_index[d] * strides[d];
    const int64_t line_stride = strides[per_row ? rank - 2 : rank - 1];
    for (int64_t l = 0; l < per_matrix; ++l) index[b * per_matrix + l] = base + l * line_stride;
  }
  return index;
}

// Per-line zero points of an operand as int32 (zeros when omitted).
StatusOr<std::vector<int32_t>> LineZeroPoints(const ir::Node& node, const Operand& op,
                                              const Tensor& data, const Tensor* zp, bool per_row,
                                              const char* what) {
  const int64_t lines = nn::Product(op.batch) * (per_row ? op.rows : op.cols);
  if (zp == nullptr) return std::vector<int32_t>(lines, 0);
  if (zp->dtype() != data.dtype()) {
    return NodeError(node, std::string(what) + " is " + zp->DebugString() +
                               "; it must have its data's type " +
                               std::string(DataTypeName(data.dtype())));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> index,
                   LineParamIndex(node, op, zp->sizes(), per_row, what));
  std::vector<int32_t> values(lines);
  for (int64_t l = 0; l < lines; ++l) {
    values[l] = static_cast<int32_t>(reference::LoadAsDouble(*zp, index[l]));
  }
  return values;
}

// Per-line positive finite scales of an operand.
StatusOr<std::vector<float>> LineScales(const ir::Node& node, const Operand& op,
                                        const Tensor& scale, bool allow_half, bool per_row,
                                        const char* what) {
  const DataType type = scale.dtype();
  if (type != DataType::kFloat32 &&
      !(allow_half && (type == DataType::kFloat16 || type == DataType::kBfloat16))) {
    return NodeError(node, std::string(what) + " is " + scale.DebugString() + "; expected float32" +
                               (allow_half ? ", float16 or bfloat16" : ""));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> index,
                   LineParamIndex(node, op, scale.sizes(), per_row, what));
  std::vector<float> values(index.size());
  for (size_t l = 0; l < index.size(); ++l) {
    values[l] = static_cast<float>(reference::LoadAsDouble(scale, index[l]));
    if (!(values[l] > 0) || !std::isfinite(values[l])) {
      return NodeError(node, std::string(what) + " holds " + std::to_string(values[l]) +
                                 "; scales must be positive and finite");
    }
  }
  return values;
}

struct MatMulAccumulation {
  std::vector<int64_t> sums;    // one per output element
  std::vector<int64_t> a_line;  // per output element: its row line of A
  std::vector<int64_t> b_line;  // per output element: its column line of B
  std::vector<int64_t> y_sizes;
};

int32_t ByteAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kUint8 ? int32_t{t.data<uint8_t>()[i]}
                                       : int32_t{t.data<int8_t>()[i]};
}

StatusOr<MatMulAccumulation> AccumulateMatMul(const ir::Node& node, const Tensor& a,
                                              const Operand& oa, const std::vector<int32_t>& a_zp,
                                              const Tensor& b, const Operand& ob,
                                              const std::vector<int32_t>& b_zp) {
  const int64_t m = oa.rows, k = oa.cols, n = ob.cols;
  std::vector<int64_t> batch, a_strides, b_strides;
  if (!nn::BroadcastShapes(oa.batch, ob.batch, &batch) ||
      !nn::BroadcastStrides(oa.batch, batch, &a_strides) ||
      !nn::BroadcastStrides(ob.batch, batch, &b_strides)) {
    return NodeError(node, "batch dimensions of a " + a.DebugString() + " and b " +
                               b.DebugString() + " do not broadcast");
  }
  std::vector<int32_t> ac(a.num_elements()), bc(b.num_elements());
  for (int64_t e = 0; e < a.num_elements(); ++e) ac[e] = ByteAt(a, e) - a_zp[e / k];
  for (int64_t e = 0; e < b.num_elements(); ++e) {
    bc[e] = ByteAt(b, e) - b_zp[(e / (k * n)) * n + e % n];
  }
  MatMulAccumulation acc;
  acc.y_sizes = batch;
  if (a.rank() > 1) acc.y_sizes.push_back(m);
  if (b.rank() > 1) acc.y_sizes.push_back(n);
  const int64_t batches = nn::Product(batch);
  acc.sums.reserve(batches * m * n);
  std::vector<int64_t> index(batch.size(), 0);
  for (int64_t bt = 0; bt < batches; ++bt, nn::NextIndex(index, batch)) {
    int64_t a_matrix = 0, b_matrix = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      a_matrix += index[d] * a_strides[d];
      b_matrix += index[d] * b_strides[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        const int32_t* arow = ac.data() + (a_matrix * m + i) * k;
        const int32_t* bcol = bc.data() + b_matrix * k * n + j;
        for (int64_t p = 0; p < k; ++p) sum += int64_t{arow[p]} * bcol[p * n];
        acc.sums.push_back(sum);
        acc.a_line.push_back(a_matrix * m + i);
        acc.b_line.push_back(b_matrix * n + j);
      }
    }
  }
  return acc;
}

// Checks a and b: uint8/int8, not scalars, inner dimensions equal.
Status CheckMatMulOperands(const ir::Node& node, const Tensor& a, const Tensor& b) {
  RETURN_IF_ERROR(CheckByteType(node, a, "a"));
  RETURN_IF_ERROR(CheckByteType(node, b, "b"));
  if (a.rank() == 0 || b.rank() == 0) {
    return NodeError(node, "a is " + a.DebugString() + " and b " + b.DebugString() +
                               "; MatMul does not take scalars");
  }
  const int64_t b_rows = b.rank() == 1 ? b.size(0) : b.size(b.rank() - 2);
  if (a.sizes().back() != b_rows) {
    return NodeError(
        node, "inner dimensions differ: a is " + a.DebugString() + ", b is " + b.DebugString());
  }
  return Status::Ok();
}

}  // namespace

// Inputs: A, B, a_zero_point (optional), b_zero_point (optional).
StatusOr<std::vector<Tensor>> MatMulInteger(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(reference::CheckInputCount(args, 2, 4));
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  RETURN_IF_ERROR(CheckMatMulOperands(node, a, b));
  const Operand oa = Promote(a, true), ob = Promote(b, false);
  const Tensor* a_zp_tensor = reference::HasInput(args, 2) ? &args.inputs[2] : nullptr;
  const Tensor* b_zp_tensor = reference::HasInput(args, 3) ? &args.inputs[3] : nullptr;
  ASSIGN_OR_RETURN(std::vector<int32_t> a_zp,
                   LineZeroPoints(node, oa, a, a_zp_tensor, true, "a_zero_point"));
  ASSIGN_OR_RETURN(std::vector<int32_t> b_zp,
                   LineZeroPoints(node, ob, b, b_zp_tensor, false, "b_zero_point"));
  ASSIGN_OR_RETURN(MatMulAccumulation acc, AccumulateMatMul(node, a, oa, a_zp, b, ob, b_zp));
  ASSIGN_OR_RETURN(Tensor y, WrapToInt32(acc.sums, acc.y_sizes));
  return std::vector<Tensor>{std::move(y)};
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
StatusOr<std::vector<Tensor>> QLinearMatMul(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(reference::CheckInputCount(args, 8, 8));
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[3];
  for (const Tensor* t : {&a, &b, &args.inputs[7]}) {
    if (args.opset >= 21 &&
        (t->dtype() == DataType::kFloat8E4M3FN || t->dtype() == DataType::kFloat8E4M3FNUZ ||
         t->dtype() == DataType::kFloat8E5M2 || t->dtype() == DataType::kFloat8E5M2FNUZ)) {
      return reference::NodeUnimplemented(node, "float8 QLinearMatMul is not supported");
    }
  }
  RETURN_IF_ERROR(CheckMatMulOperands(node, a, b));
  const bool allow_half = args.opset >= 21;
  const Operand oa = Promote(a, true), ob = Promote(b, false);
  ASSIGN_OR_RETURN(std::vector<float> a_scale,
                   LineScales(node, oa, args.inputs[1], allow_half, true, "a_scale"));
  ASSIGN_OR_RETURN(std::vector<int32_t> a_zp,
                   LineZeroPoints(node, oa, a, &args.inputs[2], true, "a_zero_point"));
  ASSIGN_OR_RETURN(std::vector<float> b_scale,
                   LineScales(node, ob, args.inputs[4], allow_half, false, "b_scale"));
  ASSIGN_OR_RETURN(std::vector<int32_t> b_zp,
                   LineZeroPoints(node, ob, b, &args.inputs[5], false, "b_zero_point"));
  ASSIGN_OR_RETURN(MatMulAccumulation acc, AccumulateMatMul(node, a, oa, a_zp, b, ob, b_zp));
  std::vector<float> real(acc.sums.size());
  for (size_t i = 0; i < acc.sums.size(); ++i) {
    real[i] = static_cast<float>(static_cast<double>(acc.sums[i]) * a_scale[acc.a_line[i]] *
                                 b_scale[acc.b_line[i]]);
  }
  ASSIGN_OR_RETURN(Tensor y,
                   Requantize(node, real, acc.y_sizes, args.inputs[6], args.inputs[7], allow_half));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace qtune::runtime::quant
