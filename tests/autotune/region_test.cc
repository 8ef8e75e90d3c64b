// Regions, pattern signatures and insertion points (region.h, pattern.h,
// insertion_points.h) on small builder graphs that pin one edge case each, and on the real
// models the tuner sees: cleaned by passes::RunPipeline, value types from shape inference.
#include "autotune/region.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "autotune/insertion_points.h"
#include "autotune/pattern.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "passes/pipeline.h"
#include "runtime/reference/registry.h"
#include "runtime/shape/infer_shapes.h"
#include "util/missing_dependency.h"

namespace qtune::autotune {
namespace {

using ir::Attribute;
using ir::GraphBuilder;
using ir::Value;
using InputSizes = std::map<std::string, std::vector<int64_t>>;

// What the tuner does before partitioning: the default pass pipeline (Constants to
// initializers, BN folded, ...), then shape inference for concrete input sizes, whose
// results become the value types (as PlanQuantization's InferShapes call sees them).
Status Prepare(ir::Graph& graph, const InputSizes& sizes) {
  passes::PassOptions options;
  options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs, int64_t opset) {
    return runtime::EvaluateNode(node, inputs, opset);
  };
  options.verify_after_each_pass = true;
  RETURN_IF_ERROR(passes::RunPipeline(graph, options).status());
  ASSIGN_OR_RETURN(runtime::ValueInfoMap infos,
                   runtime::InferShapes(graph, sizes, runtime::ShapeInferenceOptions{}));
  for (const auto& [value, info] : infos) {
    if (value->is_initializer() || info.dtype == DataType::kUndefined) continue;
    graph.FindValue(value->name())->set_type({info.dtype, Shape::FromSizes(info.sizes)});
  }
  return Status::Ok();
}

InputSizes SizesOfInputs(const ir::Graph& graph) {
  InputSizes sizes;
  for (const Value* in : graph.inputs()) sizes[in->name()] = in->type().shape->sizes();
  return sizes;
}

std::unique_ptr<ir::Graph> Prepared(std::unique_ptr<ir::Graph> graph) {
  Status status = Prepare(*graph, SizesOfInputs(*graph));
  EXPECT_TRUE(status.ok()) << status.ToString();
  return graph;
}

Value* Weight(GraphBuilder& b, std::vector<int64_t> sizes) {
  std::vector<float> values(static_cast<size_t>(NumElements(sizes)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.01f * static_cast<float>(i % 7) - 0.03f;
  static int counter = 0;
  return b.Initializer("w" + std::to_string(counter++), Tensor::FromVector<float>(sizes, values));
}

Value* Conv(GraphBuilder& b, Value* x, int64_t in_c, int64_t out_c) {
  return b.Op("Conv", {x, Weight(b, {out_c, in_c, 3, 3}), Weight(b, {out_c})},
              {Attribute::Ints("pads", {1, 1, 1, 1})});
}

RegionTree Partition(const ir::Graph& graph, const RegionOptions& options = {}) {
  StatusOr<RegionTree> tree = PartitionRegions(graph, options);
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  return tree.ok() ? std::move(*tree) : RegionTree{};
}

::testing::AssertionResult Fail() { return ::testing::AssertionFailure(); }

// Every node in exactly one leaf, leaf_of_node agreeing, leaves ordered, composites sane.
::testing::AssertionResult IsPartition(const ir::Graph& graph, const RegionTree& tree) {
  std::vector<ir::Node*> all = graph.nodes();
  if (std::set<const ir::Node*>(tree.order.begin(), tree.order.end()) !=
      std::set<const ir::Node*>(all.begin(), all.end())) {
    return Fail() << "order is not the graph's nodes, each once";
  }
  std::vector<int> seen(tree.order.size(), 0);
  int previous_first = -1;
  for (int id = 0; id < static_cast<int>(tree.regions.size()); ++id) {
    const Region& r = tree.regions[id];
    if (r.id != id || (id < tree.num_leaves) != (r.kind == Region::Kind::kLeaf)) {
      return Fail() << "region " << id << " has a wrong id or kind";
    }
    if (r.kind == Region::Kind::kComposite) {
      for (int child : r.children) {
        if (child >= tree.num_leaves || tree.regions[child].parent != id)
          return Fail() << "composite " << id << " child " << child;
      }
      continue;
    }
    if (r.nodes.empty() || !std::is_sorted(r.nodes.begin(), r.nodes.end()) ||
        r.nodes.front() <= previous_first) {
      return Fail() << "leaf " << id << " is empty or out of order";
    }
    previous_first = r.nodes.front();
    for (int v : r.nodes) {
      if (++seen[v] > 1) return Fail() << "node " << v << " in two leaves";
      if (tree.leaf_of_node[v] != id) return Fail() << "leaf_of_node[" << v << "] != " << id;
    }
  }
  for (size_t v = 0; v < seen.size(); ++v) {
    if (seen[v] != 1)
      return Fail() << "node " << v << " (" << tree.order[v]->DebugName() << ") is in no leaf";
  }
  return ::testing::AssertionSuccess();
}

int LeafOf(const RegionTree& tree, const std::string& node_name) {
  for (size_t v = 0; v < tree.order.size(); ++v) {
    if (tree.order[v]->name() == node_name) return tree.leaf_of_node[v];
  }
  ADD_FAILURE() << "no node " << node_name;
  return -1;
}

ir::OpOptions Named(std::string name) { return ir::OpOptions{std::move(name), {}, {}}; }

// ModelOpt's partitioner drops a divergent node reached first (its bug 1).
TEST(PartitionRegions, DivergentFirstNodeOfModelOptFailingCaseIsCovered) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 4, 8, 8});
  Value* c = Conv(b, x, 4, 4);
  Value* add = b.Op("Add", {b.Op("Relu", {c}), b.Op("Relu", {c})});
  b.Output(add);
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  ASSERT_EQ(graph->nodes()[0]->op_type(), "Conv");
  RegionTree tree = Partition(*graph);
  EXPECT_TRUE(IsPartition(*graph, tree));
  ASSERT_EQ(tree.num_leaves, 1) << RegionTreeToString(tree);
  EXPECT_EQ(tree.regions[0].nodes.size(), 4u);
}

// ModelOpt's sequences can put the merge node of two multi-node branches in both (bug 2).
TEST(PartitionRegions, MergeOfTwoMultiNodeBranchesIsInOneLeafOnly) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 4, 8, 8});
  Value* y = b.Input("y", DataType::kFloat32, {1, 4, 8, 8});
  Value* a = b.Op("Sigmoid", {b.Op("Relu", {x})});
  Value* c = b.Op("Sigmoid", {b.Op("Relu", {y})});
  b.Output(b.Op("Tanh", {b.Op("Add", {a, c}, {}, Named("merge"))}));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  EXPECT_TRUE(IsPartition(*graph, tree)) << RegionTreeToString(tree);
  EXPECT_EQ(tree.num_leaves, 2) << RegionTreeToString(tree);
}

// Relu -> [Conv -> Relu -> Conv, Conv(1x1 shortcut)] -> Add: one leaf from the divergent
// Relu to the Add, although a sequence growing from the stem would reach the Relu first.
TEST(PartitionRegions, ResidualBlockTailIsOneLeaf) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 4, 8, 8});
  Value* stem = b.Op("Relu", {Conv(b, x, 4, 8)}, {}, Named("block_in"));
  Value* branch = Conv(b, b.Op("Relu", {Conv(b, stem, 8, 8)}), 8, 8);
  Value* shortcut = b.Op("Conv", {stem, Weight(b, {8, 8, 1, 1})});
  b.Output(b.Op("Relu", {b.Op("Add", {branch, shortcut}, {}, Named("block_add"))}));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  EXPECT_TRUE(IsPartition(*graph, tree));
  const int leaf = LeafOf(tree, "block_in");
  EXPECT_EQ(leaf, LeafOf(tree, "block_add")) << RegionTreeToString(tree);
  EXPECT_EQ(tree.regions[leaf].nodes.size(), 6u) << RegionTreeToString(tree);
}

TEST(PartitionRegions, SequenceSplitsAtMaxSequenceSize) {
  GraphBuilder b(13);
  Value* v = b.Input("x", DataType::kFloat32, {1, 16});
  for (int i = 0; i < 25; ++i) v = b.Op(i % 2 ? "Relu" : "Sigmoid", {v});
  b.Output(v);
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  EXPECT_TRUE(IsPartition(*graph, tree));
  ASSERT_EQ(tree.num_leaves, 3);
  EXPECT_EQ(tree.regions[0].nodes.size(), 10u);
  EXPECT_EQ(tree.regions[2].nodes.size(), 5u);
}

TEST(PartitionRegions, BranchesMeetingBeyondMaxDistanceStaySeparate) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 16});
  Value* d = b.Op("Relu", {x}, {}, Named("split"));
  Value* longer = d;
  for (int i = 0; i < 12; ++i) longer = b.Op("Sigmoid", {longer});
  b.Output(b.Op("Add", {d, longer}, {}, Named("join")));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  EXPECT_TRUE(IsPartition(*graph, tree));
  EXPECT_NE(LeafOf(tree, "split"), LeafOf(tree, "join"));
  RegionOptions far;
  far.max_converge_distance = 13;
  RegionTree merged = Partition(*graph, far);
  EXPECT_TRUE(IsPartition(*graph, merged));
  EXPECT_EQ(merged.num_leaves, 1) << RegionTreeToString(merged);
}

TEST(PartitionRegions, DivergentNodeWhoseBranchesNeverMeetIsItsOwnLeaf) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 16});
  Value* d = b.Op("Relu", {b.Op("Tanh", {x})}, {}, Named("split"));
  b.Output(b.Op("Sigmoid", {d}));
  b.Output(b.Op("Relu", {d}));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  EXPECT_TRUE(IsPartition(*graph, tree));
  EXPECT_EQ(tree.num_leaves, 3) << RegionTreeToString(tree);  // [Tanh, Relu], [Sigmoid], [Relu]
}

TEST(PartitionRegions, ConstantNodeJoinsTheLeafOfItsFirstReader) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 16});
  Value* three = b.Constant(Tensor::Scalar<float>(3.0f));
  Value* y = b.Op("Relu", {b.Op("Tanh", {x})});
  b.Output(b.Op("Add", {y, three}));
  std::unique_ptr<ir::Graph> graph = b.Build();  // not cleaned: the Constant stays a node
  RegionTree tree = Partition(*graph);
  EXPECT_TRUE(IsPartition(*graph, tree)) << RegionTreeToString(tree);
  EXPECT_EQ(tree.num_leaves, 1) << RegionTreeToString(tree);
}

TEST(PartitionRegions, CompositesGroupConsecutiveLeaves) {
  GraphBuilder b(13);
  Value* v = b.Input("x", DataType::kFloat32, {1, 16});
  for (int i = 0; i < 5; ++i) {  // five divergent-convergent blocks -> five leaves
    Value* d = b.Op("Relu", {v});
    v = b.Op("Add", {d, b.Op("Sigmoid", {d})});
  }
  b.Output(v);
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionOptions options;
  options.max_composite_size = 2;
  RegionTree tree = Partition(*graph, options);
  EXPECT_TRUE(IsPartition(*graph, tree));
  ASSERT_EQ(tree.num_leaves, 5);
  ASSERT_EQ(tree.regions.size(), 7u) << RegionTreeToString(tree);  // [0,1], [2,3]; 4 alone
  EXPECT_EQ(tree.regions[5].children, (std::vector<int>{0, 1}));
  EXPECT_EQ(tree.regions[6].children, (std::vector<int>{2, 3}));
  EXPECT_EQ(tree.regions[4].parent, -1);
}

TEST(PartitionRegions, CycleIsInvalidArgument) {
  ir::Graph graph;
  Value* x = *graph.AddInput("x", {DataType::kFloat32, Shape::FromSizes({4})});
  ir::Node* a =
      *graph.AddNode({.op_type = "Add", .name = "a", .inputs = {x, x}, .output_names = {"a_out"}});
  ir::Node* r = *graph.AddNode(
      {.op_type = "Relu", .name = "r", .inputs = {a->output(0)}, .output_names = {"r_out"}});
  graph.SetNodeInput(a, 1, r->output(0));
  StatusOr<RegionTree> tree = PartitionRegions(graph, RegionOptions{});
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().code(), StatusCode::kInvalidArgument);
}

TEST(PartitionRegions, NonPositiveSizeOptionIsInvalidArgument) {
  GraphBuilder b(13);
  b.Output(b.Op("Relu", {b.Input("x", DataType::kFloat32, {4})}));
  std::unique_ptr<ir::Graph> graph = b.Build();
  RegionOptions options;
  options.max_sequence_size = 0;
  EXPECT_EQ(PartitionRegions(*graph, options).status().code(), StatusCode::kInvalidArgument);
}

// No quadratic helpers: 3000 residual blocks (12k nodes) partition in well under a second
// in a release build; the bound leaves room for sanitizer builds.
TEST(PartitionRegions, TwelveThousandNodeGraphPartitionsInLinearTime) {
  GraphBuilder b(13);
  Value* v = b.Op("Relu", {b.Input("x", DataType::kFloat32, {1, 16})});
  for (int i = 0; i < 3000; ++i) {
    v = b.Op("Relu", {b.Op("Add", {v, b.Op("Tanh", {b.Op("Sigmoid", {v})})})});
  }
  b.Output(v);
  std::unique_ptr<ir::Graph> graph = b.Build();
  auto start = std::chrono::steady_clock::now();
  RegionTree tree = Partition(*graph);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("12001 nodes partitioned in %.3f s\n", seconds);
  EXPECT_TRUE(IsPartition(*graph, tree));
  EXPECT_EQ(tree.num_leaves, 3001);
  EXPECT_LT(seconds, 10.0);
}

// --- Pattern signatures. ---

// Relu -> Conv -> Conv -> Add(Relu, .) against Relu -> [Conv, Conv] -> Add: the same ops in
// the same order, wired differently.
TEST(PatternSignature, DistinguishesWiringOfTheSameOps) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 8, 8, 8});
  Value* d1 = b.Op("Relu", {x}, {}, Named("chain_in"));
  Value* chain = b.Op("Add", {d1, Conv(b, Conv(b, d1, 8, 8), 8, 8)});
  Value* d2 = b.Op("Relu", {chain}, {}, Named("fork_in"));
  b.Output(b.Op("Add", {Conv(b, d2, 8, 8), Conv(b, d2, 8, 8)}));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  const int a = LeafOf(tree, "chain_in"), c = LeafOf(tree, "fork_in");
  ASSERT_NE(a, c);
  ASSERT_EQ(tree.regions[a].nodes.size(), tree.regions[c].nodes.size());
  for (size_t j = 0; j < tree.regions[a].nodes.size(); ++j) {
    EXPECT_EQ(tree.order[tree.regions[a].nodes[j]]->op_type(),
              tree.order[tree.regions[c].nodes[j]]->op_type());
  }
  EXPECT_NE(PatternSignature(tree, a, {}), PatternSignature(tree, c, {}));
}

// Two blocks that differ only in width: one pattern, unless shapes are asked for.
TEST(PatternSignature, ShapeAwareSignatureSeparatesWidths) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 8, 8, 8});
  // Each block's Relu reads a Sigmoid, so both have the same points.
  Value* d1 = b.Op("Relu", {b.Op("Sigmoid", {x})}, {}, Named("narrow"));
  Value* y = b.Op("Add", {d1, Conv(b, d1, 8, 8)});
  Value* d2 = b.Op("Relu", {b.Op("Sigmoid", {Conv(b, y, 8, 16)})}, {}, Named("wide"));
  b.Output(b.Op("Add", {d2, Conv(b, d2, 16, 16)}));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  const int a = LeafOf(tree, "narrow"), c = LeafOf(tree, "wide");
  EXPECT_EQ(PatternSignature(tree, a, {}), PatternSignature(tree, c, {}));
  SignatureOptions shapes{.include_shapes = true};
  EXPECT_NE(PatternSignature(tree, a, shapes), PatternSignature(tree, c, shapes));
}

TEST(PatternSignature, CompositeJoinsItsChildren) {
  GraphBuilder b(13);
  Value* v = b.Input("x", DataType::kFloat32, {1, 16});
  for (int i = 0; i < 2; ++i) {  // leaves [Tanh], [Relu, Sigmoid, Add], twice
    Value* d = b.Op("Relu", {b.Op("Tanh", {v})});
    v = b.Op("Add", {d, b.Op("Sigmoid", {d})});
  }
  b.Output(v);
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  ASSERT_EQ(tree.num_leaves, 4) << RegionTreeToString(tree);
  ASSERT_EQ(tree.regions.size(), 5u);
  const std::string tanh = PatternSignature(tree, 0, {});
  const std::string block = PatternSignature(tree, 1, {});
  EXPECT_EQ(tanh, PatternSignature(tree, 2, {}));
  EXPECT_EQ(block, PatternSignature(tree, 3, {}));
  EXPECT_EQ(PatternSignature(tree, 4, {}),
            "COMPOSITE(" + tanh + "+" + block + "+" + tanh + "+" + block + ")");
}

TEST(PatternId, IsTheFirstTwelveHexDigitsOfSha256) { EXPECT_EQ(PatternId("abc"), "ba7816bf8f01"); }

// --- Insertion points. ---

std::vector<std::string> PointNames(const RegionTree& tree, int leaf) {
  std::vector<std::string> names;
  for (const InsertionPoint& p : CandidatePoints(tree, leaf)) {
    ResolvedPoint r = Resolve(tree, leaf, p);
    names.push_back(r.node + ":" + std::to_string(r.input_index));
  }
  return names;
}

TEST(CandidatePoints, ConvInputIsAPointButWeightBiasAndFusedReluAreNot) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 8, 8, 8});
  Value* c = b.Op("Conv", {x, Weight(b, {8, 8, 3, 3}), Weight(b, {8})},
                  {Attribute::Ints("pads", {1, 1, 1, 1})}, Named("conv"));
  b.Output(b.Op("MaxPool", {b.Op("Relu", {c}, {}, Named("relu"))},
                {Attribute::Ints("kernel_shape", {2, 2})}, Named("pool")));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  ASSERT_EQ(tree.num_leaves, 1);
  EXPECT_EQ(PointNames(tree, 0), (std::vector<std::string>{"conv:0", "pool:0"}));
  ResolvedPoint r = Resolve(tree, 0, CandidatePoints(tree, 0)[0]);
  EXPECT_EQ(r.tensor, "x");
}

TEST(CandidatePoints, TinyAndNonFloatTensorsAreNotPoints) {
  GraphBuilder b(13);
  Value* tiny = b.Input("tiny", DataType::kFloat32, {1, 4});
  Value* ids = b.Input("ids", DataType::kInt64, {1, 64});
  Value* big = b.Input("big", DataType::kFloat32, {1, 64});
  b.Output(b.Op("Sigmoid", {tiny}, {}, Named("on_tiny")));
  b.Output(b.Op("Reshape", {ids, b.Initializer("shape", Tensor::FromVector<int64_t>({1}, {64}))},
                {}, Named("on_ids")));
  b.Output(b.Op("Concat", {big, b.Op("Relu", {big}, {}, Named("on_big"))},
                {Attribute::Int("axis", 1)}, Named("cat")));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  std::set<std::string> all;
  for (int leaf = 0; leaf < tree.num_leaves; ++leaf) {
    for (const std::string& p : PointNames(tree, leaf)) all.insert(p);
  }
  EXPECT_EQ(all, (std::set<std::string>{"on_big:0", "cat:0", "cat:1"}));
}

// Ops without an int8 kernel for these inputs: activation x activation MatMul and Mul,
// a broadcasting Add, linear Resize; shape-like inputs are never points.
TEST(CandidatePoints, InputsWithoutAnInt8KernelAreNotPoints) {
  GraphBuilder b(13);
  Value* x = b.Input("x", DataType::kFloat32, {1, 4, 16, 16});
  Value* row = b.Input("row", DataType::kFloat32, {1, 4, 1, 16});
  b.Output(b.Op("MatMul",
                {x, b.Op("Transpose", {x}, {Attribute::Ints("perm", {0, 1, 3, 2})}, Named("t"))},
                {}, Named("bmm")));
  b.Output(b.Op("Mul", {x, b.Op("Sigmoid", {x}, {}, Named("gate"))}, {}, Named("se_mul")));
  b.Output(b.Op("Add", {x, row}, {}, Named("bcast_add")));
  Value* scales = b.Initializer("scales", Tensor::FromVector<float>({4}, {1, 1, 2, 2}));
  b.Output(b.Op("Resize", {x, nullptr, scales}, {Attribute::String("mode", "linear")},
                Named("linear_resize")));
  b.Output(b.Op("Resize", {x, nullptr, scales}, {}, Named("nearest_resize")));
  std::unique_ptr<ir::Graph> graph = Prepared(b.Build());
  RegionTree tree = Partition(*graph);
  std::set<std::string> all;
  for (int leaf = 0; leaf < tree.num_leaves; ++leaf) {
    for (const std::string& p : PointNames(tree, leaf)) all.insert(p);
  }
  EXPECT_EQ(all, (std::set<std::string>{"t:0", "gate:0", "nearest_resize:0"}));
}

// --- The real models, as the tuner sees them. ---

struct ModelCase {
  std::string name;
  std::string path;
  InputSizes sizes;
  bool residual_tails_in_one_leaf;  // every residual Add shares a leaf with its fork
};

std::vector<ModelCase> Models() {
  const std::string m = QTUNE_MODELS_DIR, s = QTUNE_SHARED_MODELS_DIR;
  return {{"fmnist_resnet", m + "/fmnist/fmnist_resnet.onnx", {{"input", {1, 1, 28, 28}}}, true},
          {"ppocr_cls", m + "/ppocr/ppocr_cls.onnx", {{"x", {1, 3, 48, 192}}}, false},
          {"ppocrv4_det", m + "/ppocr/ppocrv4_det.onnx", {{"x", {1, 3, 320, 320}}}, false},
          {"resnet18", s + "/resnet18/resnet18.onnx", {{"input", {1, 3, 224, 224}}}, true}};
}

class RealModelTest : public ::testing::TestWithParam<ModelCase> {};

// For an Add of two computed tensors, the nearest node both inputs descend from (within 12
// steps), or nullptr.
const ir::Node* Fork(const ir::Node& add, const std::map<const ir::Node*, int>& index) {
  std::map<const ir::Node*, int> seen;  // node -> bitmask of the inputs reaching it
  for (int i = 0; i < 2; ++i) {
    std::vector<const ir::Node*> frontier = {add.input(i)->producer()};
    for (int step = 0; step < 12 && !frontier.empty(); ++step) {
      std::vector<const ir::Node*> next;
      for (const ir::Node* n : frontier) {
        if (n == nullptr || (seen[n] & (1 << i))) continue;
        seen[n] |= 1 << i;
        for (const Value* in : n->inputs()) {
          if (in != nullptr && in->producer() != nullptr) next.push_back(in->producer());
        }
      }
      frontier = std::move(next);
    }
  }
  const ir::Node* fork = nullptr;
  for (const auto& [n, mask] : seen) {
    if (mask == 3 && (fork == nullptr || index.at(n) > index.at(fork))) fork = n;
  }
  return fork;
}

TEST_P(RealModelTest, PartitionCoversAndPatternsSharePoints) {
  const ModelCase& c = GetParam();
  if (!std::filesystem::exists(c.path)) QTUNE_SKIP_OR_FAIL_IN_CI() << c.path << " is absent";
  StatusOr<std::unique_ptr<ir::Graph>> loaded = ir::LoadModel(c.path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ir::Graph& graph = **loaded;
  Status prepared = Prepare(graph, c.sizes);
  ASSERT_TRUE(prepared.ok()) << prepared.ToString();
  RegionTree tree = Partition(graph);
  ASSERT_TRUE(IsPartition(graph, tree));

  // Residual tails: the Add and the node its two inputs fork from share a leaf.
  std::map<const ir::Node*, int> index;
  for (size_t v = 0; v < tree.order.size(); ++v) index[tree.order[v]] = static_cast<int>(v);
  int residual_adds = 0, tails_in_one_leaf = 0;
  for (const ir::Node* node : tree.order) {
    if (node->op_type() != "Add" || node->num_inputs() != 2 ||
        node->input(0)->producer() == nullptr || node->input(1)->producer() == nullptr) {
      continue;
    }
    const ir::Node* fork = Fork(*node, index);
    if (fork == nullptr) continue;
    ++residual_adds;
    const bool same = tree.leaf_of_node[index[fork]] == tree.leaf_of_node[index[node]];
    tails_in_one_leaf += same;
    if (c.residual_tails_in_one_leaf) {
      EXPECT_TRUE(same) << node->DebugName() << " and its fork " << fork->DebugName();
    }
  }

  // Equal signatures: equal point lists, resolving to the same op types and inputs.
  std::map<std::string, std::vector<int>> by_signature;
  for (int leaf = 0; leaf < tree.num_leaves; ++leaf) {
    by_signature[PatternSignature(tree, leaf, {})].push_back(leaf);
  }
  int points = 0, repeated = 0;
  for (const auto& [signature, leaves] : by_signature) {
    const std::vector<InsertionPoint> first = CandidatePoints(tree, leaves[0]);
    repeated += leaves.size() > 1;
    points += static_cast<int>(first.size() * leaves.size());
    for (int other : leaves) {
      ASSERT_EQ(CandidatePoints(tree, other), first) << signature;
      for (const InsertionPoint& p : first) {
        ResolvedPoint a = Resolve(tree, leaves[0], p), b = Resolve(tree, other, p);
        const Region& ra = tree.regions[leaves[0]];
        const Region& rb = tree.regions[other];
        EXPECT_EQ(tree.order[ra.nodes[p.node_in_region]]->op_type(),
                  tree.order[rb.nodes[p.node_in_region]]->op_type());
        EXPECT_EQ(a.input_index, b.input_index);
        EXPECT_FALSE(b.tensor.empty());
      }
    }
  }
  std::printf(
      "%s: %zu nodes, %d leaves, %zu distinct leaf patterns (%d repeated), %d points, "
      "%d/%d residual tails in one leaf\n",
      c.name.c_str(), tree.order.size(), tree.num_leaves, by_signature.size(), repeated, points,
      tails_in_one_leaf, residual_adds);
  EXPECT_GT(repeated, 0) << "no leaf pattern repeats";
  EXPECT_GT(points, 0);
  if (std::getenv("QTUNE_PRINT_REGIONS")) std::printf("%s", RegionTreeToString(tree).c_str());
}

INSTANTIATE_TEST_SUITE_P(Models, RealModelTest, ::testing::ValuesIn(Models()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace qtune::autotune
