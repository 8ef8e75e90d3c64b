#include "measure/model_blobs.h"

// onnx_pb.h defines ONNX_API and includes onnx/onnx-ml.pb.h (ONNX_ML comes from the
// onnx_proto target).
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <functional>
#include <set>

#include "core/sha256.h"

namespace qtune::measure {
namespace {

// Calls `visit` on every graph of `graph`: itself, then the subgraphs of its nodes'
// attributes (If/Loop/Scan bodies), depth first. Depth is bounded: a hostile model cannot
// exhaust the stack.
template <typename Graph, typename Visit>
bool ForEachGraph(Graph* graph, const Visit& visit, int depth = 0) {
  if (depth > 64) return false;
  if (!visit(graph)) return false;
  for (auto& node : *graph->mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g() && !ForEachGraph(attr.mutable_g(), visit, depth + 1)) return false;
      for (auto& g : *attr.mutable_graphs()) {
        if (!ForEachGraph(&g, visit, depth + 1)) return false;
      }
    }
  }
  return true;
}

bool Parse(std::string_view bytes, onnx::ModelProto& model) {
  return bytes.size() <= static_cast<size_t>(INT_MAX) &&
         model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// Applies `check` to every tensor a node's attributes hold (dense and sparse).
template <typename Check>
Status CheckNodeTensors(const onnx::NodeProto& node, const Check& check) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.has_t()) RETURN_IF_ERROR(check(a.t()));
    for (const onnx::TensorProto& t : a.tensors()) RETURN_IF_ERROR(check(t));
    auto sparse = [&](const onnx::SparseTensorProto& s) -> Status {
      RETURN_IF_ERROR(check(s.values()));
      return check(s.indices());
    };
    if (a.has_sparse_tensor()) RETURN_IF_ERROR(sparse(a.sparse_tensor()));
    for (const onnx::SparseTensorProto& s : a.sparse_tensors()) RETURN_IF_ERROR(sparse(s));
  }
  return Status::Ok();
}

}  // namespace

bool IsBlobLocation(std::string_view location) {
  return location.size() == 64 + 4 && location.substr(64) == ".bin" &&
         IsSha256Hex(location.substr(0, 64));
}

SplitModel SplitModelBytes(std::string model_bytes, size_t threshold, size_t min_model_bytes) {
  SplitModel out;
  onnx::ModelProto model;
  if (model_bytes.size() < min_model_bytes || !Parse(model_bytes, model) || !model.has_graph()) {
    out.sha256 = Sha256Hex(model_bytes);
    out.bytes = std::move(model_bytes);
    return out;
  }
  std::set<std::string> seen;
  ForEachGraph(model.mutable_graph(), [&](onnx::GraphProto* graph) {
    for (onnx::TensorProto& t : *graph->mutable_initializer()) {
      if (t.data_location() == onnx::TensorProto::EXTERNAL || t.raw_data().size() < threshold) {
        continue;
      }
      const std::string sha = Sha256Hex(t.raw_data());
      const size_t length = t.raw_data().size();
      if (seen.insert(sha).second) out.blobs.emplace_back(sha, std::move(*t.mutable_raw_data()));
      t.clear_raw_data();
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      t.clear_external_data();
      auto add = [&](const char* key, std::string value) {
        onnx::StringStringEntryProto* e = t.add_external_data();
        e->set_key(key);
        e->set_value(std::move(value));
      };
      add("location", sha + ".bin");
      add("offset", "0");
      add("length", std::to_string(length));
    }
    return true;
  });
  if (out.blobs.empty()) {  // nothing to split: the file as it was, byte for byte
    out.sha256 = Sha256Hex(model_bytes);
    out.bytes = std::move(model_bytes);
    return out;
  }
  model_bytes.clear();
  model_bytes.shrink_to_fit();
  model.SerializeToString(&out.bytes);
  out.sha256 = Sha256Hex(out.bytes);
  return out;
}

StatusOr<std::vector<BlobRef>> SkeletonBlobs(std::string_view bytes, const std::string& source) {
  onnx::ModelProto model;
  std::vector<BlobRef> out;
  if (!Parse(bytes, model) || !model.has_graph()) return out;
  std::set<std::string> seen;
  Status error = Status::Ok();
  const bool complete = ForEachGraph(model.mutable_graph(), [&](onnx::GraphProto* graph) {
    auto check = [&](const onnx::TensorProto& t) -> Status {
      if (t.data_location() != onnx::TensorProto::EXTERNAL && t.external_data_size() == 0) {
        return Status::Ok();
      }
      const std::string where =
          fmt::format("model {}: tensor '{}' (graph '{}')", source, t.name(), graph->name());
      std::string location;
      bool has_length = false;
      BlobRef ref;
      for (const auto& e : t.external_data()) {
        if (e.key() == "location") {
          location = e.value();
        } else if (e.key() == "offset") {
          if (e.value() != "0") {
            return InvalidArgumentError(
                fmt::format("{}: external data offset '{}' refused: a blob starts at offset 0",
                            where, e.value().substr(0, 40)));
          }
        } else if (e.key() == "length") {
          const std::string& v = e.value();
          if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != v.npos) {
            return InvalidArgumentError(fmt::format("{}: external data length '{}' is not a number",
                                                    where, v.substr(0, 40)));
          }
          ref.length = std::stoll(v);
          has_length = true;
        }
      }
      if (!IsBlobLocation(location)) {
        return InvalidArgumentError(fmt::format(
            "{}: external data location '{}' refused: a job may only name blobs, "
            "'<64 lowercase hex digits of their SHA-256>.bin' in the model's own folder",
            where, location.substr(0, 200)));
      }
      if (!has_length) {
        return InvalidArgumentError(fmt::format("{}: external data without a length", where));
      }
      ref.sha256 = location.substr(0, 64);
      if (seen.insert(ref.sha256).second) out.push_back(ref);
      return Status::Ok();
    };
    for (const onnx::TensorProto& t : graph->initializer()) {
      error = check(t);
      if (!error.ok()) return false;
    }
    for (const onnx::SparseTensorProto& s : graph->sparse_initializer()) {
      for (const onnx::TensorProto* t : {&s.values(), &s.indices()}) {
        error = check(*t);
        if (!error.ok()) return false;
      }
    }
    for (const onnx::NodeProto& node : graph->node()) {  // Constant nodes' tensors
      error = CheckNodeTensors(node, check);
      if (!error.ok()) return false;
    }
    return true;
  });
  if (!error.ok()) return error;
  for (const onnx::FunctionProto& f : model.functions()) {  // model-local functions' bodies
    onnx::GraphProto body;
    body.set_name("function " + f.name());
    *body.mutable_node() = f.node();
    const bool ok = ForEachGraph(&body, [&](onnx::GraphProto* graph) {
      for (const onnx::NodeProto& node : graph->node()) {
        error = CheckNodeTensors(node, [&](const onnx::TensorProto& t) {
          if (t.data_location() != onnx::TensorProto::EXTERNAL && t.external_data_size() == 0) {
            return Status::Ok();
          }
          return InvalidArgumentError(
              fmt::format("model {}: tensor '{}' ({}): external data location refused: only "
                          "initializers may name blobs",
                          source, t.name(), graph->name()));
        });
        if (!error.ok()) return false;
      }
      return true;
    });
    if (!error.ok()) return error;
    if (!ok) break;
  }
  if (!complete) {
    return InvalidArgumentError(
        fmt::format("model {}: subgraphs nested more than 64 deep refused", source));
  }
  return out;
}

}  // namespace qtune::measure
