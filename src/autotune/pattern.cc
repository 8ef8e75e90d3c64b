#include "autotune/pattern.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "autotune/insertion_points.h"
#include "core/check.h"
#include "core/sha256.h"

namespace qtune::autotune {
namespace {

std::string FormatFloat(float v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", static_cast<double>(v));
  return buf;
}

std::string FormatTensor(const Tensor& t) {
  if (!t.is_valid()) return "tensor()";
  return "tensor(" + std::string(DataTypeName(t.dtype())) + "," + SizesToString(t.sizes()) + ")";
}

template <typename T, typename F>
std::string FormatList(const std::vector<T>& values, F format) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + format(values[i]);
  return out + "]";
}

// Tensor-valued attributes (a Constant's value) are summarized by type and sizes, like
// initializers; subgraphs by the digest of their serialized bytes.
std::string FormatAttribute(const ir::Attribute& a) {
  using T = ir::AttributeType;
  auto digest = [](const std::string& bytes) { return Sha256Hex(bytes).substr(0, 12); };
  switch (a.type) {
    case T::kFloat:
      return FormatFloat(a.f);
    case T::kInt:
      return std::to_string(a.i);
    case T::kString:
      return "\"" + a.s + "\"";
    case T::kTensor:
      return FormatTensor(a.t);
    case T::kGraph:
      return "graph(" + (a.graphs.empty() ? std::string() : digest(a.graphs[0])) + ")";
    case T::kFloats:
      return FormatList(a.floats, FormatFloat);
    case T::kInts:
      return FormatList(a.ints, [](int64_t v) { return std::to_string(v); });
    case T::kStrings:
      return FormatList(a.strings, [](const std::string& s) { return "\"" + s + "\""; });
    case T::kTensors:
      return FormatList(a.tensors, FormatTensor);
    case T::kGraphs:
      return FormatList(a.graphs, [&](const std::string& g) { return "graph(" + digest(g) + ")"; });
  }
  return "?";
}

std::string FormatType(const ir::Value* value) {
  if (value->is_initializer()) return SizesToString(value->initializer().sizes());
  const ir::TensorType& type = value->type();
  return type.shape ? type.shape->ToString() : "?";
}

bool IsConstantOutput(const ir::Value* value) {
  const ir::Node* p = value->producer();
  return value->is_initializer() || (p != nullptr && p->op_type() == "Constant" &&
                                     (p->domain().empty() || p->domain() == "ai.onnx"));
}

std::string LeafSignature(const RegionTree& tree, const Region& leaf,
                          const SignatureOptions& options) {
  std::unordered_map<const ir::Node*, int> local;  // node -> index in leaf.nodes
  for (int j = 0; j < static_cast<int>(leaf.nodes.size()); ++j)
    local[tree.order[leaf.nodes[j]]] = j;
  std::string out;
  for (int j = 0; j < static_cast<int>(leaf.nodes.size()); ++j) {
    const ir::Node& node = *tree.order[leaf.nodes[j]];
    if (j > 0) out += ";";
    if (!node.domain().empty() && node.domain() != "ai.onnx") out += node.domain() + ":";
    out += node.op_type();
    std::vector<std::string> attributes;
    for (const ir::Attribute& a : node.attributes()) {
      attributes.push_back(a.name + "=" + FormatAttribute(a));
    }
    std::sort(attributes.begin(), attributes.end());
    if (!attributes.empty()) out += FormatList(attributes, [](const std::string& s) { return s; });
    out += "(";
    for (size_t i = 0; i < node.num_inputs(); ++i) {
      if (i > 0) out += ",";
      const ir::Value* in = node.input(i);
      auto it =
          in != nullptr && in->producer() != nullptr ? local.find(in->producer()) : local.end();
      if (in == nullptr) {
        out += "-";
      } else if (it != local.end()) {
        out += "n" + std::to_string(it->second) + "." + std::to_string(in->producer_output_index());
      } else if (IsConstantOutput(in)) {
        out += "w";
        if (options.include_shapes) out += FormatType(in);
      } else {
        out += "ext";
      }
    }
    out += ")";
    if (!node.implicit_inputs().empty()) {
      out += "+" + std::to_string(node.implicit_inputs().size()) + "implicit";
    }
    if (options.include_shapes) {
      out += "->";
      for (size_t k = 0; k < node.num_outputs(); ++k) {
        const ir::Value* o = node.output(k);
        out += (k ? "," : "") + (o != nullptr ? FormatType(o) : std::string("-"));
      }
    }
  }
  // The points depend on facts outside the lines above (dtypes, tiny tensors, the producer
  // of an external input); carrying them makes equal signatures imply equal point lists.
  out += "|points:";
  std::vector<InsertionPoint> points = CandidatePoints(tree, leaf.id);
  for (size_t p = 0; p < points.size(); ++p) {
    out += (p ? "," : "") + std::to_string(points[p].node_in_region) + "." +
           std::to_string(points[p].input_index);
  }
  return out;
}

}  // namespace

std::string PatternSignature(const RegionTree& tree, int region_id,
                             const SignatureOptions& options) {
  QTUNE_CHECK(region_id >= 0 && region_id < static_cast<int>(tree.regions.size()));
  const Region& region = tree.regions[region_id];
  if (region.kind == Region::Kind::kLeaf) return LeafSignature(tree, region, options);
  std::string out = "COMPOSITE(";
  for (size_t c = 0; c < region.children.size(); ++c) {
    out += (c ? "+" : "") + PatternSignature(tree, region.children[c], options);
  }
  return out + ")";
}

std::string PatternId(const std::string& signature) { return Sha256Hex(signature).substr(0, 12); }

}  // namespace qtune::autotune
