// qtune::MatMulBias(A, W [K, N], bias [N]) -> Split(last axis) into parts of n_i columns
//   => one qtune::MatMulBias(A, W[:, part], bias[part]) per part that is read
// A packed projection (a transformer's fused QKV Linear) then writes Q, K and V each into
// its own buffer instead of one [.., N] tensor that a Split copies apart: the same products
// over the same weights (oneDNN blocks N by 64 either way), one pass over the output less.
// Exact: every output element is the same dot product plus the same bias, rounded the same.
// Only when every part has at least kMinPartColumns columns (narrower products run below
// the kernels' block width) and the MatMulBias output has no other reader.
#include "runtime/fusion/fused_ops.h"
#include "runtime/fusion/fusion_pipeline.h"
#include "runtime/fusion/pattern_util.h"

namespace qtune::runtime {
namespace {

constexpr int64_t kMinPartColumns = 64;

struct ProjectionSplit {
  ir::Node* matmul = nullptr;
  ir::Node* split = nullptr;
  std::vector<int64_t> columns;  // n_i per Split output
};

std::optional<ProjectionSplit> SelectProjectionSplit(ir::Node* matmul, const SizesByName& sizes) {
  if (!IsQtuneOp(*matmul, "MatMulBias") || matmul->num_inputs() != 3) return std::nullopt;
  const ir::Value* w = matmul->input(1);
  const ir::Value* bias = matmul->input(2);
  if (w == nullptr || !w->is_initializer() || w->initializer().rank() != 2 ||
      w->initializer().dtype() != DataType::kFloat32 || bias == nullptr ||
      !bias->is_initializer() || bias->initializer().dtype() != DataType::kFloat32 ||
      bias->initializer().num_elements() != w->initializer().size(1)) {
    return std::nullopt;
  }
  ir::Node* split = pattern::SoleConsumer(matmul->output(0));
  if (!pattern::IsDefaultOp(split, "Split")) return std::nullopt;
  auto out = sizes.find(matmul->output(0)->name());
  if (out == sizes.end() || out->second.sizes.empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(out->second.sizes.size());
  const int64_t axis = split->GetInt("axis", 0);
  if (axis != -1 && axis != rank - 1) return std::nullopt;
  ProjectionSplit m{matmul, split, {}};
  int64_t total = 0;
  for (const ir::Value* part : split->outputs()) {
    auto part_sizes = part == nullptr ? sizes.end() : sizes.find(part->name());
    if (part_sizes == sizes.end() || part_sizes->second.sizes.size() != out->second.sizes.size()) {
      return std::nullopt;
    }
    const int64_t n = part_sizes->second.sizes.back();
    if (n < kMinPartColumns) return std::nullopt;
    m.columns.push_back(n);
    total += n;
  }
  if (total != w->initializer().size(1) || m.columns.size() < 2) return std::nullopt;
  return m;
}

// Columns [first, first + n) of the [K, N] matrix `w` (or of the [N] vector `bias`).
Tensor Columns(const Tensor& t, int64_t first, int64_t n) {
  const int64_t rows = t.rank() == 2 ? t.size(0) : 1;
  const int64_t stride = t.num_elements() / rows;
  std::vector<int64_t> sizes = t.rank() == 2 ? std::vector<int64_t>{rows, n} : std::vector{n};
  Tensor part = *Tensor::Allocate(DataType::kFloat32, std::move(sizes));
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(t.data<float>() + r * stride + first, n, part.data<float>() + r * n);
  }
  return part;
}

Status ApplyProjectionSplit(ir::Graph& graph, ProjectionSplit m) {
  const Tensor& w = m.matmul->input(1)->initializer();
  const Tensor& bias = m.matmul->input(2)->initializer();
  std::vector<std::pair<ir::Value*, std::string>> renames;  // new output, Split output's name
  int64_t first = 0;
  for (size_t i = 0; i < m.columns.size(); ++i) {
    ir::Value* part = m.split->output(i);
    const int64_t n = m.columns[i];
    if (part->uses().empty() && !part->is_graph_output()) {
      first += n;
      continue;
    }
    const std::string base = part->name();
    ASSIGN_OR_RETURN(ir::Value * w_part, graph.AddInitializer(graph.UniqueValueName(base + "_w"),
                                                              Columns(w, first, n)));
    ASSIGN_OR_RETURN(ir::Value * b_part, graph.AddInitializer(graph.UniqueValueName(base + "_b"),
                                                              Columns(bias, first, n)));
    ir::NodeSpec spec;
    spec.op_type = "MatMulBias";
    spec.domain = kQtuneDomain;
    spec.name = graph.UniqueNodeName(m.matmul->name() + "_part" + std::to_string(i));
    spec.inputs = {m.matmul->input(0), w_part, b_part};
    spec.attributes = m.matmul->attributes();  // activation, precision
    spec.output_names = {graph.UniqueValueName(base + "_fused")};
    ASSIGN_OR_RETURN(ir::Node * node, graph.AddNode(std::move(spec)));
    graph.ReplaceAllUsesWith(part, node->output(0));
    renames.emplace_back(node->output(0), base);
    first += n;
  }
  ir::Value* whole_w = m.matmul->input(1);
  ir::Value* whole_bias = m.matmul->input(2);
  RETURN_IF_ERROR(pattern::RemoveChain(graph, {m.split, m.matmul}));
  // The parts hold copies: drop the whole matrix unless something else reads it.
  for (ir::Value* whole : {whole_w, whole_bias}) {
    if (whole->uses().empty() && !whole->is_graph_output()) {
      RETURN_IF_ERROR(graph.RemoveValue(whole));
    }
  }
  for (auto& [value, name] : renames) RETURN_IF_ERROR(graph.RenameValue(value, std::move(name)));
  return Status::Ok();
}

}  // namespace

StatusOr<int> FuseProjectionSplit(ir::Graph& graph, const SizesByName& sizes) {
  return pattern::FuseAll(
      graph, [&](ir::Node* node) { return SelectProjectionSplit(node, sizes); },
      ApplyProjectionSplit);
}

}  // namespace qtune::runtime
