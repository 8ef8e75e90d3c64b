#include "ir/attribute.h"

namespace qtune::ir {

std::string_view AttributeTypeName(AttributeType type) {
  switch (type) {
    case AttributeType::kFloat:
      return "float";
    case AttributeType::kInt:
      return "int";
    case AttributeType::kString:
      return "string";
    case AttributeType::kTensor:
      return "tensor";
    case AttributeType::kGraph:
      return "graph";
    case AttributeType::kFloats:
      return "floats";
    case AttributeType::kInts:
      return "ints";
    case AttributeType::kStrings:
      return "strings";
    case AttributeType::kTensors:
      return "tensors";
    case AttributeType::kGraphs:
      return "graphs";
  }
  return "unknown";
}

Attribute Attribute::Float(std::string name, float v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::kFloat;
  a.f = v;
  return a;
}

Attribute Attribute::Int(std::string name, int64_t v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::kInt;
  a.i = v;
  return a;
}

Attribute Attribute::String(std::string name, std::string v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::kString;
  a.s = std::move(v);
  return a;
}

Attribute Attribute::TensorValue(std::string name, Tensor v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::kTensor;
  a.t = std::move(v);
  return a;
}

Attribute Attribute::Floats(std::string name, std::vector<float> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::kFloats;
  a.floats = std::move(v);
  return a;
}

Attribute Attribute::Ints(std::string name, std::vector<int64_t> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::kInts;
  a.ints = std::move(v);
  return a;
}

Attribute Attribute::Strings(std::string name, std::vector<std::string> v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttributeType::kStrings;
  a.strings = std::move(v);
  return a;
}

}  // namespace qtune::ir
