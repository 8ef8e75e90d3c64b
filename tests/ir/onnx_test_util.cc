#include "ir/onnx_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>

namespace qtune::ir::testing {
namespace fs = std::filesystem;

namespace {

void SetValueInfo(onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims,
                  int32_t elem_type) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

}  // namespace

onnx::ModelProto MakeModel(int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model.mutable_graph()->set_name("test");
  return model;
}

void AddInput(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
              int32_t elem_type) {
  SetValueInfo(g->add_input(), name, std::move(dims), elem_type);
}

void AddOutput(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
               int32_t elem_type) {
  SetValueInfo(g->add_output(), name, std::move(dims), elem_type);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op_type,
                         std::vector<std::string> inputs, std::vector<std::string> outputs,
                         const std::string& name) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op_type);
  if (!name.empty()) n->set_name(name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

onnx::TensorProto* AddInitializer(onnx::GraphProto* g, const std::string& name,
                                  std::vector<int64_t> dims, const std::vector<float>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(1);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
  return t;
}

onnx::ModelProto MakeReluModel() {
  onnx::ModelProto m = MakeModel();
  AddInput(m.mutable_graph(), "x", {1, 4});
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"y"}, "relu");
  AddOutput(m.mutable_graph(), "y", {1, 4});
  return m;
}

std::string Serialize(const onnx::ModelProto& model) {
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  return bytes;
}

StatusOr<std::unique_ptr<Graph>> Parse(const onnx::ModelProto& model, const LoadOptions& options) {
  return ParseModel(Serialize(model), "test.onnx", options);
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string("qtune_ir_") + (info ? info->name() : "test") + "_" +
                     std::to_string(::getpid()) + "_" + std::to_string(counter++);
  path_ = fs::path(::testing::TempDir()) / name;
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

std::string TypeString(const TensorType& t) {
  return std::string(DataTypeName(t.dtype)) + (t.shape ? t.shape->ToString() : "<no shape>");
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  if (a.is_valid() != b.is_valid()) return false;
  if (!a.is_valid()) return true;
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.byte_size() == b.byte_size() &&
         (a.byte_size() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0);
}

void ExpectSameAttribute(const Attribute& a, const Attribute& b, const std::string& where) {
  EXPECT_EQ(a.name, b.name) << where;
  ASSERT_EQ(a.type, b.type) << where << " attribute " << a.name;
  switch (a.type) {
    case AttributeType::kFloat: {
      // Compare bits so NaN attributes compare equal.
      EXPECT_EQ(std::memcmp(&a.f, &b.f, sizeof(float)), 0) << where << " " << a.name;
      break;
    }
    case AttributeType::kInt:
      EXPECT_EQ(a.i, b.i) << where << " " << a.name;
      break;
    case AttributeType::kString:
      EXPECT_EQ(a.s, b.s) << where << " " << a.name;
      break;
    case AttributeType::kTensor:
      EXPECT_TRUE(SameTensor(a.t, b.t)) << where << " " << a.name;
      break;
    case AttributeType::kFloats:
      ASSERT_EQ(a.floats.size(), b.floats.size()) << where << " " << a.name;
      EXPECT_EQ(std::memcmp(a.floats.data(), b.floats.data(), a.floats.size() * sizeof(float)), 0)
          << where << " " << a.name;
      break;
    case AttributeType::kInts:
      EXPECT_EQ(a.ints, b.ints) << where << " " << a.name;
      break;
    case AttributeType::kStrings:
      EXPECT_EQ(a.strings, b.strings) << where << " " << a.name;
      break;
    case AttributeType::kTensors:
      ASSERT_EQ(a.tensors.size(), b.tensors.size()) << where << " " << a.name;
      for (size_t i = 0; i < a.tensors.size(); ++i) {
        EXPECT_TRUE(SameTensor(a.tensors[i], b.tensors[i]))
            << where << " " << a.name << "[" << i << "]";
      }
      break;
    case AttributeType::kGraph:
    case AttributeType::kGraphs: {
      ASSERT_EQ(a.graphs.size(), b.graphs.size()) << where << " " << a.name;
      for (size_t i = 0; i < a.graphs.size(); ++i) {
        onnx::GraphProto ga, gb;
        ASSERT_TRUE(ga.ParseFromString(a.graphs[i]));
        ASSERT_TRUE(gb.ParseFromString(b.graphs[i]));
        EXPECT_EQ(ga.SerializeAsString(), gb.SerializeAsString()) << where << " " << a.name;
      }
      break;
    }
  }
}

std::vector<std::string> Names(const std::vector<Value*>& values) {
  std::vector<std::string> out;
  for (Value* v : values) out.push_back(v == nullptr ? "" : v->name());
  return out;
}

}  // namespace

void ExpectSameGraph(const Graph& e, const Graph& a) {
  EXPECT_EQ(e.info().ir_version, a.info().ir_version);
  EXPECT_EQ(e.info().opset_imports, a.info().opset_imports);
  EXPECT_EQ(e.info().producer_name, a.info().producer_name);
  EXPECT_EQ(e.info().producer_version, a.info().producer_version);
  EXPECT_EQ(e.info().doc_string, a.info().doc_string);
  EXPECT_EQ(e.info().metadata_props, a.info().metadata_props);
  ASSERT_EQ(e.inputs().size(), a.inputs().size());
  for (size_t i = 0; i < e.inputs().size(); ++i) {
    EXPECT_EQ(e.inputs()[i]->name(), a.inputs()[i]->name());
    EXPECT_EQ(TypeString(e.inputs()[i]->type()), TypeString(a.inputs()[i]->type()))
        << e.inputs()[i]->name();
  }
  ASSERT_EQ(e.outputs().size(), a.outputs().size());
  for (size_t i = 0; i < e.outputs().size(); ++i) {
    EXPECT_EQ(e.outputs()[i]->name(), a.outputs()[i]->name());
    EXPECT_EQ(TypeString(e.outputs()[i]->type()), TypeString(a.outputs()[i]->type()))
        << e.outputs()[i]->name();
  }
  ASSERT_EQ(e.initializers().size(), a.initializers().size());
  for (size_t i = 0; i < e.initializers().size(); ++i) {
    EXPECT_EQ(e.initializers()[i]->name(), a.initializers()[i]->name());
    EXPECT_TRUE(SameTensor(e.initializers()[i]->initializer(), a.initializers()[i]->initializer()))
        << e.initializers()[i]->name();
  }
  ASSERT_EQ(e.num_nodes(), a.num_nodes());
  std::vector<Node*> en = e.nodes(), an = a.nodes();
  for (size_t i = 0; i < en.size(); ++i) {
    const std::string where = en[i]->DebugName();
    EXPECT_EQ(en[i]->op_type(), an[i]->op_type()) << where;
    EXPECT_EQ(en[i]->name(), an[i]->name()) << where;
    EXPECT_EQ(en[i]->domain(), an[i]->domain()) << where;
    EXPECT_EQ(Names(en[i]->inputs()), Names(an[i]->inputs())) << where;
    EXPECT_EQ(Names(en[i]->outputs()), Names(an[i]->outputs())) << where;
    EXPECT_EQ(Names(en[i]->implicit_inputs()), Names(an[i]->implicit_inputs())) << where;
    ASSERT_EQ(en[i]->attributes().size(), an[i]->attributes().size()) << where;
    for (size_t k = 0; k < en[i]->attributes().size(); ++k) {
      ExpectSameAttribute(en[i]->attributes()[k], an[i]->attributes()[k], where);
    }
    for (size_t k = 0; k < en[i]->num_outputs(); ++k) {
      if (en[i]->output(k) == nullptr || an[i]->output(k) == nullptr) continue;
      EXPECT_EQ(TypeString(en[i]->output(k)->type()), TypeString(an[i]->output(k)->type()))
          << where << " output " << k;
    }
  }
}

std::vector<std::string> BundledModelPaths() {
  const fs::path dir(QTUNE_MODELS_DIR);
  return {(dir / "fmnist/fmnist_resnet.onnx").string(), (dir / "ppocr/ppocrv4_det.onnx").string(),
          (dir / "ppocr/ppocr_cls.onnx").string()};
}

std::vector<std::string> SharedModelPaths() {
  std::vector<std::string> paths;
  const fs::path dir(QTUNE_SHARED_MODELS_DIR);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return paths;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".onnx") {
      paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace qtune::ir::testing
