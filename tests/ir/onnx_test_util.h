// Helpers for the ir tests: hand-made ONNX protos, temporary folders, graph comparison.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/onnx_io.h"

namespace qtune::ir::testing {

// A ModelProto with an empty graph named "test", IR version 8, default-domain `opset`.
onnx::ModelProto MakeModel(int64_t opset = 17);
// Graph input or output: float32 unless said otherwise; dims < 0 are unknown.
void AddInput(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
              int32_t elem_type = 1);
void AddOutput(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims = {},
               int32_t elem_type = 1);
onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op_type,
                         std::vector<std::string> inputs, std::vector<std::string> outputs,
                         const std::string& name = "");
// A float32 initializer with raw_data.
onnx::TensorProto* AddInitializer(onnx::GraphProto* g, const std::string& name,
                                  std::vector<int64_t> dims, const std::vector<float>& values);
// x -> Relu -> y, one float32 [1,4] input and output.
onnx::ModelProto MakeReluModel();

std::string Serialize(const onnx::ModelProto& model);
StatusOr<std::unique_ptr<Graph>> Parse(const onnx::ModelProto& model,
                                       const LoadOptions& options = {});

// A fresh, empty folder under the test temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void WriteBytes(const std::string& path, const std::string& bytes);
std::string ReadBytes(const std::string& path);

// Checks with gtest expectations that two graphs have the same model info, inputs and
// outputs (names and types incl. symbolic dims), initializers (bytes), nodes (op types,
// names, domains, input/output names, attributes) in the same order.
void ExpectSameGraph(const Graph& expected, const Graph& actual);

// The bundled models (QTUNE_MODELS_DIR) and, when present, every *.onnx under
// QTUNE_SHARED_MODELS_DIR.
std::vector<std::string> BundledModelPaths();
std::vector<std::string> SharedModelPaths();

}  // namespace qtune::ir::testing
