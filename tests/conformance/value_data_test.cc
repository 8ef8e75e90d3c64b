// Loader-level check of the ONNX node tests whose graphs pass sequences and optionals
// (test_sequence_*, test_optional_*, test_split_to_sequence_*, test_concat_from_sequence*,
// and the Identity/If/Loop tests on such values): each model loads with its value kinds,
// and each data set's SequenceProto/OptionalProto files read into RunValues of the
// declared kinds. Models without If/Loop bodies also run node by node, the sequence and
// optional ops through ValueKernelRegistry, SequenceMap through runtime::RunSequenceMap
// (its body node by node too) and the rest through the reference kernels, and their
// outputs must match the expected ones. (If/Loop on sequences need the engine's
// executor; conformance_node_test runs those once it handles values.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "conformance/node_test_case.h"
#include "conformance/tensor_compare.h"
#include "ir/onnx_io.h"
#include "util/missing_dependency.h"
#include "util/value_node_runner.h"

namespace qtune::conformance {
namespace {

constexpr const char* kNodeRoot = "/usr/share/libonnx-testdata/data/node";

bool IsValueTest(const std::string& name) {
  for (const char* prefix : {"test_sequence_", "test_optional_", "test_split_to_sequence",
                             "test_concat_from_sequence"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  for (const char* exact : {"test_identity_sequence", "test_if_seq", "test_loop13_seq",
                            "test_loop16_seq_none", "test_identity_opt", "test_if_opt"}) {
    if (name == exact) return true;
  }
  return false;
}

std::vector<std::string> ValueTestDirs() {
  std::vector<std::string> dirs;
  for (const std::string& dir : ListNodeTests(kNodeRoot)) {
    if (IsValueTest(std::filesystem::path(dir).filename())) dirs.push_back(dir);
  }
  return dirs;
}

std::vector<std::string> DataSets(const std::string& dir) {
  std::vector<std::string> sets;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

bool KindMatches(const ir::TensorType& type, const RunValue& v) {
  if (type.kind == ir::ValueKind::kSequence) return v.is_sequence();
  if (type.kind == ir::ValueKind::kOptional) {
    return v.is_none() ||
           (type.optional_of == ir::ValueKind::kSequence ? v.is_sequence() : v.is_tensor());
  }
  return v.is_tensor();
}

// A node with a body other than SequenceMap's (If, Loop: the engine's executor runs those).
bool HasSubgraph(const ir::Node& node) {
  if (node.op_type() == "SequenceMap") return false;
  for (const ir::Attribute& a : node.attributes()) {
    if (a.type == ir::AttributeType::kGraph || a.type == ir::AttributeType::kGraphs) return true;
  }
  return false;
}

using testing::RunNodeByNode;
using testing::ValueMap;

// Empty when `actual` matches `expected` (kinds, sequence lengths and element types, and
// every tensor by CompareTensors).
std::string CompareValues(const RunValue& actual, const RunValue& expected) {
  if (actual.kind() != expected.kind()) return "the kinds differ";
  if (expected.is_none()) return "";
  if (expected.is_tensor()) return CompareTensors(actual.tensor(), expected.tensor(), {});
  if (actual.sequence().size() != expected.sequence().size()) {
    return "sequence lengths " + std::to_string(actual.sequence().size()) + " and " +
           std::to_string(expected.sequence().size());
  }
  if (actual.elem_dtype() != expected.elem_dtype()) return "the element types differ";
  for (size_t i = 0; i < expected.sequence().size(); ++i) {
    std::string diff = CompareTensors(actual.sequence()[i], expected.sequence()[i], {});
    if (!diff.empty()) return "element " + std::to_string(i) + ": " + diff;
  }
  return "";
}

TEST(ValueDataTest, ModelsLoadAndDataSetsReadWithTheDeclaredKinds) {
  const std::vector<std::string> dirs = ValueTestDirs();
  if (dirs.empty()) QTUNE_SKIP_OR_FAIL_IN_CI() << kNodeRoot << " is missing (libonnx-testdata)";
  int data_sets = 0;
  for (const std::string& dir : dirs) {
    SCOPED_TRACE(dir);
    auto graph = ir::LoadModel(dir + "/model.onnx");
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    size_t value_inputs = 0;
    size_t value_outputs = 0;
    for (const ir::Value* v : (*graph)->inputs()) value_inputs += v->type().is_tensor() ? 0 : 1;
    for (const ir::Value* v : (*graph)->outputs()) value_outputs += v->type().is_tensor() ? 0 : 1;
    EXPECT_GT(value_inputs + value_outputs, 0u) << "no sequence or optional graph value";
    for (const std::string& set : DataSets(dir)) {
      auto data = ReadNodeTestData(**graph, set);
      ASSERT_TRUE(data.ok()) << set << ": " << data.status().ToString();
      ++data_sets;
      EXPECT_EQ(data->value_inputs.size(), value_inputs);
      EXPECT_EQ(data->value_outputs.size(), value_outputs);
      EXPECT_EQ(data->outputs.size(), (*graph)->outputs().size());
      for (const auto& [name, v] : data->value_inputs) {
        EXPECT_TRUE(KindMatches((*graph)->FindValue(name)->type(), v)) << name;
      }
      for (const auto& [name, v] : data->value_outputs) {
        EXPECT_TRUE(KindMatches((*graph)->FindValue(name)->type(), v)) << name;
      }
    }
  }
  std::printf("%zu value tests, %d data sets read\n", dirs.size(), data_sets);
}

TEST(ValueDataTest, ModelsWithoutIfOrLoopMatchTheirExpectedOutputsNodeByNode) {
  const std::vector<std::string> dirs = ValueTestDirs();
  if (dirs.empty()) QTUNE_SKIP_OR_FAIL_IN_CI() << kNodeRoot << " is missing (libonnx-testdata)";
  std::vector<std::string> passed;
  for (const std::string& dir : dirs) {
    SCOPED_TRACE(dir);
    auto graph = ir::LoadModel(dir + "/model.onnx");
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    const std::vector<ir::Node*> nodes = (*graph)->nodes();
    if (std::any_of(nodes.begin(), nodes.end(), [](ir::Node* n) { return HasSubgraph(*n); })) {
      continue;
    }
    for (const std::string& set : DataSets(dir)) {
      auto data = ReadNodeTestData(**graph, set);
      ASSERT_TRUE(data.ok()) << data.status().ToString();
      ValueMap inputs;
      for (const auto& [name, t] : data->inputs) inputs[name] = RunValue::Of(t);
      for (const auto& [name, v] : data->value_inputs) inputs[name] = v;
      auto outputs = RunNodeByNode(**graph, std::move(inputs));
      ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
      size_t next_value = 0;
      for (size_t i = 0; i < outputs->size(); ++i) {
        const RunValue expected = data->outputs[i].is_valid()
                                      ? RunValue::Of(data->outputs[i])
                                      : data->value_outputs[next_value++].second;
        EXPECT_EQ(CompareValues((*outputs)[i], expected), "") << "output " << i;
      }
    }
    passed.push_back(std::filesystem::path(dir).filename());
  }
  std::printf("run node by node:");
  for (const std::string& name : passed) std::printf(" %s", name.c_str());
  std::printf("\n");
  EXPECT_FALSE(passed.empty());
}

}  // namespace
}  // namespace qtune::conformance
