// Loading and saving ONNX models (onnx.ModelProto) to and from the Graph IR.
//
// Load accepts: initializers, Constant nodes (kept as nodes; the passes turn them into
// initializers), external data files (paths relative to the model's folder; paths that
// escape that folder are refused), opset imports, symbolic dims, and subgraph attributes
// (If/Loop/Scan bodies, kept as serialized protos with their outer-scope reads recorded
// as implicit inputs). Malformed input of any kind returns a Status naming the file and
// the offending node/tensor; it never crashes and never allocates unboundedly.
// docs/formats/onnx-support.md lists the rules, limits and error cases.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::ir {

struct LoadOptions {
  // Folder external data paths are resolved against; empty disables external data.
  // LoadModel() sets it to the model file's folder.
  std::string external_data_dir;
  // Refuse models whose tensors together declare more than this many bytes.
  int64_t max_total_tensor_bytes = int64_t{8} << 30;
  // Run Verify() on the loaded graph.
  bool verify = true;
};

StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path);
StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path, const LoadOptions& options);
// Parses serialized ModelProto bytes. `source_name` is used in error messages.
StatusOr<std::unique_ptr<Graph>> ParseModel(std::string_view bytes, const std::string& source_name,
                                            const LoadOptions& options);

struct SaveOptions {
  // Initializers of at least this many bytes go to `external_data_file` (relative to the
  // model's folder) when use_external_data is set. Protobuf cannot write a model above
  // 2 GiB inline, so SaveModel switches to external data automatically above that.
  bool use_external_data = false;
  int64_t external_data_threshold_bytes = 1024;
  std::string external_data_file;  // default: "<model file name>.data"
  // When the graph's tensors together exceed this many bytes, SaveModel uses external
  // data even without use_external_data (and, if the initializers alone are not enough,
  // moves Constant-node tensors out too). Just below protobuf's 2 GiB; tests lower it.
  int64_t max_inline_bytes = (int64_t{2} << 30) - (int64_t{64} << 20);
};

Status SaveModel(const Graph& graph, const std::string& path);
Status SaveModel(const Graph& graph, const std::string& path, const SaveOptions& options);
// Serializes with all tensors inline. Fails above protobuf's 2 GiB limit.
StatusOr<std::string> SerializeModel(const Graph& graph);

}  // namespace qtune::ir
