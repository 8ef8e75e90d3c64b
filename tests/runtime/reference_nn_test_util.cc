#include "reference_nn_test_util.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, includes onnx-ml.pb.h

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "util/missing_dependency.h"

namespace qtune::runtime::nn::testing {
namespace {

constexpr const char* kOnnxNodeTestDir = "/usr/share/libonnx-testdata/data/node/";

template <typename T>
T ReadAs(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return static_cast<T>(t.data<float>()[i]);
    case DataType::kFloat64:
      return static_cast<T>(t.data<double>()[i]);
    case DataType::kInt64:
      return static_cast<T>(t.data<int64_t>()[i]);
    case DataType::kInt32:
      return static_cast<T>(t.data<int32_t>()[i]);
    case DataType::kInt8:
      return static_cast<T>(t.data<int8_t>()[i]);
    case DataType::kUint8:
      return static_cast<T>(t.data<uint8_t>()[i]);
    case DataType::kBool:
      return static_cast<T>(t.data<bool>()[i]);
    default:
      ADD_FAILURE() << "unsupported dtype in test: " << t.DebugString();
      return T{};
  }
}

bool ParseFile(const std::string& path, google::protobuf::Message* message) {
  std::ifstream in(path, std::ios::binary);
  return in && message->ParseFromIstream(&in);
}

std::optional<Tensor> TensorFromProto(const onnx::TensorProto& p) {
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  auto allocated = Tensor::Allocate(static_cast<DataType>(p.data_type()), dims);
  if (!allocated.ok()) return std::nullopt;
  Tensor t = std::move(allocated).value();
  const int64_t n = t.num_elements();
  if (p.has_raw_data()) {
    if (p.raw_data().size() != t.byte_size()) return std::nullopt;
    std::memcpy(t.raw_data(), p.raw_data().data(), t.byte_size());
    return t;
  }
  auto fill = [&](const auto& field, auto tag) -> bool {
    using T = decltype(tag);
    if (field.size() != n) return false;
    for (int64_t i = 0; i < n; ++i) t.data<T>()[i] = static_cast<T>(field.Get(i));
    return true;
  };
  bool ok = false;
  switch (t.dtype()) {
    case DataType::kFloat32:
      ok = fill(p.float_data(), float{});
      break;
    case DataType::kFloat64:
      ok = fill(p.double_data(), double{});
      break;
    case DataType::kInt64:
      ok = fill(p.int64_data(), int64_t{});
      break;
    case DataType::kInt32:
      ok = fill(p.int32_data(), int32_t{});
      break;
    case DataType::kInt8:
      ok = fill(p.int32_data(), int8_t{});
      break;
    case DataType::kUint8:
      ok = fill(p.int32_data(), uint8_t{});
      break;
    case DataType::kBool:
      ok = fill(p.int32_data(), bool{});
      break;
    default:
      break;
  }
  if (!ok) return std::nullopt;
  return t;
}

std::optional<ir::Attribute> AttributeFromProto(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      return ir::Attribute::Float(a.name(), a.f());
    case onnx::AttributeProto::INT:
      return ir::Attribute::Int(a.name(), a.i());
    case onnx::AttributeProto::STRING:
      return ir::Attribute::String(a.name(), a.s());
    case onnx::AttributeProto::FLOATS:
      return ir::Attribute::Floats(a.name(), {a.floats().begin(), a.floats().end()});
    case onnx::AttributeProto::INTS:
      return ir::Attribute::Ints(a.name(), {a.ints().begin(), a.ints().end()});
    case onnx::AttributeProto::TENSOR: {
      auto t = TensorFromProto(a.t());
      if (!t) return std::nullopt;
      return ir::Attribute::TensorValue(a.name(), *t);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

KernelResult RunNode(ReferenceKernel kernel, const NodeSpecForTest& spec,
                     const std::vector<Tensor>& inputs) {
  ir::Graph graph;
  ir::NodeSpec node_spec{.op_type = spec.op_type, .name = "node"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_valid()) {
      node_spec.inputs.push_back(nullptr);
      continue;
    }
    auto value =
        graph.AddInput("x" + std::to_string(i),
                       ir::TensorType{inputs[i].dtype(), Shape::FromSizes(inputs[i].sizes())});
    if (!value.ok()) return value.status();
    node_spec.inputs.push_back(*value);
  }
  for (size_t i = 0; i < spec.num_outputs; ++i) {
    bool present = spec.output_present.empty() || spec.output_present[i];
    node_spec.output_names.push_back(present ? "y" + std::to_string(i) : "");
  }
  node_spec.attributes = spec.attributes;
  auto node = graph.AddNode(std::move(node_spec));
  if (!node.ok()) return node.status();
  return kernel(KernelArgs{.node = **node, .inputs = inputs, .opset = spec.opset});
}

Tensor RunOk(ReferenceKernel kernel, const NodeSpecForTest& spec,
             const std::vector<Tensor>& inputs) {
  KernelResult result = RunNode(kernel, spec, inputs);
  if (!result.ok()) {
    ADD_FAILURE() << spec.op_type << " failed: " << result.status().ToString();
    return Tensor();
  }
  if (result->empty()) {
    ADD_FAILURE() << spec.op_type << " returned no outputs";
    return Tensor();
  }
  return (*result)[0];
}

Tensor RandomFloats(std::vector<int64_t> sizes, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, std::move(sizes));
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

Tensor RandomDoubles(std::vector<int64_t> sizes, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t = *Tensor::Allocate(DataType::kFloat64, std::move(sizes));
  for (double& v : t.span<double>()) v = dist(rng);
  return t;
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) out[i] = ReadAs<double>(t, i);
  return out;
}

::testing::AssertionResult TensorsNear(const Tensor& actual, const Tensor& expected, double atol,
                                       double rtol) {
  if (!actual.is_valid() || !expected.is_valid()) {
    return ::testing::AssertionFailure() << "invalid tensor: actual " << actual.DebugString()
                                         << ", expected " << expected.DebugString();
  }
  if (actual.sizes() != expected.sizes() || actual.dtype() != expected.dtype()) {
    return ::testing::AssertionFailure()
           << "actual " << actual.DebugString() << " vs expected " << expected.DebugString();
  }
  std::vector<double> a = AsDoubles(actual);
  std::vector<double> e = AsDoubles(expected);
  std::ostringstream errors;
  int bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    bool same_nan = std::isnan(a[i]) && std::isnan(e[i]);
    if (same_nan || std::fabs(a[i] - e[i]) <= atol + rtol * std::fabs(e[i])) continue;
    if (++bad <= 8) errors << "\n  [" << i << "] actual " << a[i] << " expected " << e[i];
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << a.size() << " elements differ" << errors.str();
}

double Dot(const Tensor& a, const Tensor& b) {
  std::vector<double> x = AsDoubles(a);
  std::vector<double> y = AsDoubles(b);
  EXPECT_EQ(x.size(), y.size());
  double sum = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) sum += x[i] * y[i];
  return sum;
}

std::optional<OnnxNodeCase> LoadOnnxNodeCase(const std::string& name) {
  const std::string dir = std::string(kOnnxNodeTestDir) + name + "/";
  if (!std::filesystem::exists(dir + "model.onnx")) return std::nullopt;
  onnx::ModelProto model;
  if (!ParseFile(dir + "model.onnx", &model)) {
    ADD_FAILURE() << "cannot read " << dir << "model.onnx";
    return std::nullopt;
  }
  OnnxNodeCase c;
  for (const auto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") c.opset = opset.version();
  }
  // Graph inputs are numbered as the input_N.pb files.
  std::map<std::string, Tensor> by_name;
  for (int i = 0; i < model.graph().input_size(); ++i) {
    onnx::TensorProto proto;
    std::string path = dir + "test_data_set_0/input_" + std::to_string(i) + ".pb";
    auto t = ParseFile(path, &proto) ? TensorFromProto(proto) : std::nullopt;
    if (!t) {
      ADD_FAILURE() << "cannot read " << path;
      return std::nullopt;
    }
    by_name[model.graph().input(i).name()] = *t;
  }
  // The tested node, possibly preceded by Constant nodes that feed it.
  const onnx::NodeProto* tested = nullptr;
  for (const onnx::NodeProto& n : model.graph().node()) {
    if (n.op_type() == "Constant" && n.attribute_size() == 1 && n.attribute(0).name() == "value") {
      auto t = TensorFromProto(n.attribute(0).t());
      if (t) {
        by_name[n.output(0)] = *t;
        continue;
      }
    }
    if (tested != nullptr) {
      ADD_FAILURE() << dir << " has more than one node besides Constants";
      return std::nullopt;
    }
    tested = &n;
  }
  if (tested == nullptr) {
    ADD_FAILURE() << dir << " has no node to test";
    return std::nullopt;
  }
  const onnx::NodeProto& proto_node = *tested;
  c.graph = std::make_unique<ir::Graph>();
  ir::NodeSpec spec{.op_type = proto_node.op_type(), .name = name};
  for (const std::string& input : proto_node.input()) {
    if (input.empty()) {
      spec.inputs.push_back(nullptr);
      c.inputs.push_back(Tensor());
      continue;
    }
    const Tensor& t = by_name[input];
    spec.inputs.push_back(*c.graph->AddInput(input, {t.dtype(), Shape::FromSizes(t.sizes())}));
    c.inputs.push_back(t);
  }
  for (int i = 0; i < proto_node.output_size(); ++i) {
    spec.output_names.push_back(proto_node.output(i));
    onnx::TensorProto proto;
    std::string path = dir + "test_data_set_0/output_" + std::to_string(i) + ".pb";
    auto t = ParseFile(path, &proto) ? TensorFromProto(proto) : std::nullopt;
    if (!t) {
      ADD_FAILURE() << "cannot read " << path;
      return std::nullopt;
    }
    c.outputs.push_back(*t);
  }
  for (const auto& a : proto_node.attribute()) {
    auto attribute = AttributeFromProto(a);
    if (!attribute) {
      ADD_FAILURE() << "unsupported attribute " << a.name() << " in " << dir;
      return std::nullopt;
    }
    spec.attributes.push_back(*attribute);
  }
  auto node = c.graph->AddNode(std::move(spec));
  if (!node.ok()) {
    ADD_FAILURE() << node.status().ToString();
    return std::nullopt;
  }
  c.node = *node;
  return c;
}

void CheckOnnxNodeCase(const std::string& name, ReferenceKernel kernel, double atol, double rtol) {
  std::optional<OnnxNodeCase> c = LoadOnnxNodeCase(name);
  if (!c) {
    if (!::testing::Test::HasFailure()) {
      QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX node test data not installed";
    }
    return;
  }
  KernelResult result =
      kernel(KernelArgs{.node = *c->node, .inputs = c->inputs, .opset = c->opset});
  ASSERT_TRUE(result.ok()) << name << ": " << result.status().ToString();
  ASSERT_GE(result->size(), c->outputs.size()) << name;
  for (size_t i = 0; i < c->outputs.size(); ++i) {
    EXPECT_TRUE(TensorsNear((*result)[i], c->outputs[i], atol, rtol)) << name << " output " << i;
  }
}

}  // namespace qtune::runtime::nn::testing
