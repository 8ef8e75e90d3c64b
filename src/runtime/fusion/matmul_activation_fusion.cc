// MatMul-family producers absorb the activation that follows them (a oneDNN eltwise
// post-op of the matmul primitive):
//   qtune::MatMulBias -> activation                 => qtune::MatMulBias{activation}
// (activation: ActivationOf's, plus Gelu in both forms, MatMulActivationOf)
//   Gemm(A, B const, C const [N]) -> activation     => qtune::MatMulBias{activation}
// The Gemm form is the one exporters write for Linear layers (transB = 1, alpha = beta = 1);
// B is transposed once here when transB is set, a missing C becomes a zero bias.
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {
namespace {

using pattern::IsDefaultOp;
using pattern::SoleConsumer;

bool IsFloatMatrix(const ir::Value* v) {
  return v != nullptr && v->is_initializer() && v->initializer().rank() == 2 &&
         v->initializer().dtype() == DataType::kFloat32;
}

// Gemm that is exactly A x B + c with a per-column bias c.
bool IsLinearGemm(const ir::Node* gemm) {
  if (!IsDefaultOp(gemm, "Gemm") || gemm->GetInt("transA", 0) != 0 ||
      gemm->GetFloat("alpha", 1.0f) != 1.0f || !IsFloatMatrix(gemm->input(1))) {
    return false;
  }
  const ir::Value* c = gemm->input(2);
  if (c == nullptr) return true;
  const Tensor& w = gemm->input(1)->initializer();
  int64_t n = gemm->GetInt("transB", 0) != 0 ? w.size(0) : w.size(1);
  return gemm->GetFloat("beta", 1.0f) == 1.0f && c->is_initializer() &&
         c->initializer().dtype() == DataType::kFloat32 && c->initializer().num_elements() == n &&
         (c->initializer().rank() == 1 || c->initializer().size(0) == 1);
}

// The Gemm's B as [K, N] and its bias as [N].
std::pair<Tensor, Tensor> LinearWeights(const ir::Node* gemm) {
  const Tensor& b = gemm->input(1)->initializer();
  Tensor w = b;
  if (gemm->GetInt("transB", 0) != 0) {
    int64_t n = b.size(0), k = b.size(1);
    w = *Tensor::Allocate(DataType::kFloat32, {k, n});
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < k; ++j) w.data<float>()[j * n + i] = b.data<float>()[i * k + j];
    }
  }
  int64_t n = w.size(1);
  Tensor bias = *Tensor::Allocate(DataType::kFloat32, {n});
  if (gemm->input(2) != nullptr) {
    std::copy_n(gemm->input(2)->initializer().data<float>(), n, bias.data<float>());
  }
  return {w, bias};
}

Status Apply(ir::Graph& graph, ir::Node* producer, ir::Node* act, const Activation& a) {
  ir::NodeSpec spec;
  spec.op_type = "MatMulBias";
  spec.domain = kQtuneDomain;
  spec.name = graph.UniqueNodeName(producer->name() + "_" + act->op_type());
  if (IsQtuneOp(*producer, "MatMulBias")) {
    spec.inputs = producer->inputs();
  } else {
    auto [w, bias] = LinearWeights(producer);
    ASSIGN_OR_RETURN(ir::Value * w_value,
                     graph.AddInitializer(graph.UniqueValueName(producer->name() + "_w"), w));
    ASSIGN_OR_RETURN(ir::Value * b_value,
                     graph.AddInitializer(graph.UniqueValueName(producer->name() + "_b"), bias));
    spec.inputs = {producer->input(0), w_value, b_value};
  }
  spec.attributes = {ir::Attribute::String("activation", a.op),
                     ir::Attribute::Floats("activation_params", a.params)};
  pattern::CarryPrecision(*producer, spec);
  return pattern::ReplaceChain(graph, std::move(spec), act->output(0), {act, producer}).status();
}

}  // namespace

StatusOr<int> FuseMatMulActivation(ir::Graph& graph) {
  int count = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (ir::Node* node : graph.nodes()) {
      bool fused_matmul =
          IsQtuneOp(*node, "MatMulBias") && node->GetString("activation", "").empty();
      if (!fused_matmul && !IsLinearGemm(node)) continue;
      ir::Node* act = SoleConsumer(node->output(0));
      if (act == nullptr) continue;
      std::optional<Activation> a = MatMulActivationOf(*act, graph.onnx_opset());
      if (!a) continue;
      RETURN_IF_ERROR(Apply(graph, node, act, *a));
      ++count;
      changed = true;
      break;
    }
  }
  return count;
}

}  // namespace qtune::runtime
