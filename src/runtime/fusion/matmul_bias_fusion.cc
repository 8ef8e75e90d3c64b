// MatMul(A, W) -> Add(bias)  =>  qtune::MatMulBias(A, W, bias)   (see fused_ops.h)
// when W is a constant matrix [K, N] and bias a float32 constant that varies only along
// the last axis ([N], [1, N], ... or a scalar). The constant-weight matmul kernel then
// adds the bias inside the primitive. Exact: the same sum, rounded the same way.
//
// MatMulBias(A, W, bias) -> Add(R)  =>  qtune::MatMulBias(A, W, bias, Sum = R)
// for a transformer's residual connection: R computed (not a constant), float32, of the
// product's sizes exactly (no broadcasting), and the MatMulBias without an activation (Add
// comes after it). The kernels add R in the primitive (a oneDNN sum post-op, writing in
// R's buffer when nothing reads R later) instead of a separate pass over the output.
// Exact: (A W + bias) + R, rounded as the Add did.
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {
namespace {

using pattern::IsDefaultOp;
using pattern::SoleConsumer;

struct MatMulBiasMatch {
  ir::Node* matmul = nullptr;
  ir::Node* add = nullptr;
  Tensor bias;  // [N]
};

std::optional<MatMulBiasMatch> SelectMatMulBias(ir::Node* matmul, const SizesByName& sizes) {
  if (!IsDefaultOp(matmul, "MatMul") || matmul->num_inputs() != 2) return std::nullopt;
  const ir::Value* w = matmul->input(1);
  if (w == nullptr || !w->is_initializer() || w->initializer().rank() != 2 ||
      w->initializer().dtype() != DataType::kFloat32) {
    return std::nullopt;
  }
  auto out = sizes.find(matmul->output(0)->name());
  auto a = sizes.find(matmul->input(0)->name());
  if (out == sizes.end() || a == sizes.end() || a->second.sizes.size() < 2 ||
      out->second.dtype != DataType::kFloat32) {
    return std::nullopt;
  }
  const std::vector<int64_t>& out_sizes = out->second.sizes;
  const int64_t n = out_sizes.back();
  ir::Node* add = SoleConsumer(matmul->output(0));
  if (!IsDefaultOp(add, "Add") || add->num_inputs() != 2) return std::nullopt;
  const ir::Value* other = add->input(0) == matmul->output(0) ? add->input(1) : add->input(0);
  if (other == nullptr || !other->is_initializer()) return std::nullopt;
  const Tensor& c = other->initializer();
  if (c.dtype() != DataType::kFloat32 || c.rank() > out_sizes.size()) return std::nullopt;
  for (size_t i = 0; i + 1 < c.rank(); ++i) {
    if (c.size(i) != 1) return std::nullopt;
  }
  MatMulBiasMatch m{matmul, add, {}};
  if (c.num_elements() == n) {
    StatusOr<Tensor> flat = c.Reshaped({n});
    if (!flat.ok()) return std::nullopt;
    m.bias = *flat;
  } else if (c.num_elements() == 1) {
    m.bias = *Tensor::Allocate(DataType::kFloat32, {n});
    for (float& v : m.bias.span<float>()) v = c.data<float>()[0];
  } else {
    return std::nullopt;
  }
  return m;
}

Status ApplyMatMulBias(ir::Graph& graph, MatMulBiasMatch m) {
  ir::Value* result = m.add->output(0);
  ASSIGN_OR_RETURN(
      ir::Value * bias,
      graph.AddInitializer(graph.UniqueValueName(result->name() + "_bias"), std::move(m.bias)));
  ir::NodeSpec spec;
  spec.op_type = "MatMulBias";
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(m.matmul->name() + "_bias");
  spec.inputs = {m.matmul->input(0), m.matmul->input(1), bias};
  pattern::CarryPrecision(*m.matmul, spec);
  return pattern::ReplaceChain(graph, std::move(spec), result, {m.matmul, m.add}).status();
}

struct ResidualMatch {
  ir::Node* matmul = nullptr;
  ir::Node* add = nullptr;
  ir::Value* residual = nullptr;
};

std::optional<ResidualMatch> SelectMatMulResidual(ir::Node* matmul, const SizesByName& sizes) {
  if (!IsQtuneOp(*matmul, "MatMulBias") || matmul->num_inputs() != 3 ||
      !matmul->GetString("activation", "").empty()) {
    return std::nullopt;
  }
  ir::Node* add = SoleConsumer(matmul->output(0));
  if (!IsDefaultOp(add, "Add") || add->num_inputs() != 2) return std::nullopt;
  ir::Value* residual = add->input(0) == matmul->output(0) ? add->input(1) : add->input(0);
  if (residual == nullptr || residual == matmul->output(0) || residual->is_initializer()) {
    return std::nullopt;
  }
  auto product = sizes.find(matmul->output(0)->name());
  auto r = sizes.find(residual->name());
  auto sum = sizes.find(add->output(0)->name());
  if (product == sizes.end() || r == sizes.end() || sum == sizes.end() ||
      r->second.dtype != DataType::kFloat32 || r->second.sizes != product->second.sizes ||
      sum->second.sizes != product->second.sizes) {
    return std::nullopt;
  }
  return ResidualMatch{matmul, add, residual};
}

Status ApplyMatMulResidual(ir::Graph& graph, ResidualMatch m) {
  ir::NodeSpec spec;
  spec.op_type = "MatMulBias";
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(m.matmul->name() + "_residual");
  spec.inputs = {m.matmul->input(0), m.matmul->input(1), m.matmul->input(2), m.residual};
  spec.attributes = m.matmul->attributes();
  return pattern::ReplaceChain(graph, std::move(spec), m.add->output(0), {m.add, m.matmul})
      .status();
}

}  // namespace

StatusOr<int> FuseMatMulResidual(ir::Graph& graph, const SizesByName& sizes) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return SelectMatMulResidual(node, sizes); },
      ApplyMatMulResidual);
}

StatusOr<int> FuseMatMulBias(ir::Graph& graph, const SizesByName& sizes) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return SelectMatMulBias(node, sizes); }, ApplyMatMulBias);
}

}  // namespace qtune::runtime
