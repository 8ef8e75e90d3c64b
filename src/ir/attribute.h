// Node attributes, as in ONNX's AttributeProto. Subgraph attributes (If/Loop/Scan bodies)
// are kept as serialized onnx.GraphProto bytes: qtune carries them through load and save
// unchanged; the outer-scope values they read are recorded on the node as implicit inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace qtune::ir {

enum class AttributeType {
  kFloat,
  kInt,
  kString,
  kTensor,
  kGraph,
  kFloats,
  kInts,
  kStrings,
  kTensors,
  kGraphs,
};

std::string_view AttributeTypeName(AttributeType type);

struct Attribute {
  std::string name;
  AttributeType type = AttributeType::kInt;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::string> graphs;  // serialized onnx.GraphProto, one per subgraph

  static Attribute Float(std::string name, float v);
  static Attribute Int(std::string name, int64_t v);
  static Attribute String(std::string name, std::string v);
  static Attribute TensorValue(std::string name, Tensor v);
  static Attribute Floats(std::string name, std::vector<float> v);
  static Attribute Ints(std::string name, std::vector<int64_t> v);
  static Attribute Strings(std::string name, std::vector<std::string> v);
};

}  // namespace qtune::ir
