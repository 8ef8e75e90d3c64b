// Conversions between ONNX protobuf messages and the IR's pieces (tensors, types,
// attributes). Internal to the ir module: the public entry points are in onnx_io.h.
//
// Every function that reads a proto treats it as untrusted: errors are Statuses that name
// the tensor or attribute (the caller adds the file and node), sizes are checked before
// anything is allocated.
#pragma once

// onnx_pb.h defines ONNX_API and includes onnx/onnx-ml.pb.h (ONNX_ML comes from the
// onnx_proto target).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/attribute.h"
#include "ir/graph.h"

namespace qtune::ir {

// Turns TensorProtos into Tensors while keeping the load's total allocation within a
// budget. One reader per load; not thread-safe.
class TensorReader {
 public:
  // `external_data_dir` empty: tensors with external data are refused.
  TensorReader(std::string external_data_dir, int64_t max_total_bytes);

  // Reads raw_data, the typed fields (float_data, int32_data, int64_data, double_data,
  // uint64_data) or external data. `what` names the tensor in errors, e.g.
  // "initializer 'conv1.weight'".
  StatusOr<Tensor> Read(const onnx::TensorProto& proto, const std::string& what);

  int64_t bytes_read() const { return used_bytes_; }

 private:
  Status Reserve(int64_t bytes, const std::string& what);
  // Reads exactly out.size() bytes (the file's bytes of the tensor: packed for the 4-bit
  // types) from the external data file `proto` names.
  Status ReadExternal(const onnx::TensorProto& proto, const std::string& what,
                      std::span<std::byte> out);

  std::string external_data_dir_;
  int64_t max_total_bytes_;
  int64_t used_bytes_ = 0;
};

// Writes dtype, dims and raw_data (not the name). REQUIRES: tensor.is_valid().
void TensorToProto(const Tensor& tensor, onnx::TensorProto* proto);
// Appends the tensor's bytes as an ONNX file holds them: the 4-bit types packed two per
// byte (PackedByteSize bytes), everything else as in memory.
void AppendFileBytes(const Tensor& tensor, std::string* out);

// Tensor types only; sequence/map/optional/sparse types are Unimplemented. A TypeProto
// without a value is an untyped value (kUndefined, no shape).
StatusOr<TensorType> TensorTypeFromProto(const onnx::TypeProto& proto);
// Writes nothing when the type is entirely unknown.
void TensorTypeToProto(const TensorType& type, onnx::TypeProto* proto);
bool HasTypeInformation(const TensorType& type);

// `what` names the node in errors. Tensor attributes are read through `reader`.
StatusOr<Attribute> AttributeFromProto(const onnx::AttributeProto& proto, TensorReader& reader,
                                       const std::string& what);
// Internal error if a graph attribute holds bytes that are not a GraphProto.
Status AttributeToProto(const Attribute& attribute, onnx::AttributeProto* proto);

// Names a subgraph reads from enclosing scopes (recursively through its own subgraphs):
// used but not defined by its inputs, initializers or nodes. In order of first use.
std::vector<std::string> OuterScopeNames(const onnx::GraphProto& graph);
// OuterScopeNames of all the graph attributes of a node, merged, first use first.
std::vector<std::string> OuterScopeNames(const onnx::NodeProto& node);

}  // namespace qtune::ir
