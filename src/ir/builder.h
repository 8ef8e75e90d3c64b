// GraphBuilder: a terse way to write graphs in tests and to build architecture-only
// benchmark models in C++.
//
//   GraphBuilder b(/*opset=*/17);
//   Value* x = b.Input("x", DataType::kFloat32, {1, 3, 224, 224});
//   Value* w = b.Initializer("w", weights);
//   Value* y = b.Op("Conv", {x, w}, {Attribute::Ints("pads", {1, 1, 1, 1})});
//   b.Output(y);
//   std::unique_ptr<Graph> g = b.Build();
//
// The builder is for trusted code: every method CHECK-fails on misuse (a name used twice,
// a value from another graph) instead of returning a Status, and Build() CHECK-fails if
// the result does not pass Verify(). Untrusted input goes through onnx_io.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/shape.h"
#include "core/tensor.h"
#include "ir/attribute.h"
#include "ir/graph.h"

namespace qtune::ir {

// Optional explicit names and domain for one Op call. Empty fields get generated names:
// nodes "<op_type>_<n>", outputs "<node name>_out" (or "_out0", "_out1", ... for several).
struct OpOptions {
  std::string name;
  std::vector<std::string> output_names;  // empty, or one per output
  std::string domain;
};

// The ONNX IR version that goes with an opset of the default domain (7 -> 3 ... 21, 22 -> 10,
// 23, 24 -> 11: IR 11 brought float4e2m1 and float8e8m0; 25 -> 12).
int64_t IrVersionForOpset(int64_t opset);

class GraphBuilder {
 public:
  // Imports the default ONNX domain at `opset` and picks the matching IR version.
  explicit GraphBuilder(int64_t opset);
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  // Graph inputs; dims may be symbolic in the Shape form (Dim::Symbolic("batch")).
  Value* Input(std::string name, DataType dtype, const std::vector<int64_t>& sizes);
  Value* Input(std::string name, DataType dtype, Shape shape);
  Value* Initializer(std::string name, Tensor tensor);
  // A Constant node holding `tensor` in its `value` attribute; returns its output.
  Value* Constant(Tensor tensor, const OpOptions& options = {});

  // A node with one output. Use nullptr in `inputs` for an omitted optional input.
  Value* Op(const std::string& op_type, std::vector<Value*> inputs,
            std::vector<Attribute> attributes = {}, const OpOptions& options = {});
  // A node with `num_outputs` outputs.
  std::vector<Value*> MultiOp(const std::string& op_type, std::vector<Value*> inputs,
                              size_t num_outputs, std::vector<Attribute> attributes = {},
                              const OpOptions& options = {});
  // The node that produced the last Op/MultiOp/Constant result.
  Node* last_node() const { return last_node_; }

  // Records a known type on a value (the builder does no shape inference).
  void SetType(Value* value, DataType dtype, Shape shape);
  void Output(Value* value);
  // Also imports `domain` (e.g. "com.microsoft") at `version`.
  void ImportOpset(const std::string& domain, int64_t version);

  // The graph under construction, for anything the builder has no verb for.
  Graph& graph() { return *graph_; }

  // Returns the finished graph (sorted topologically). CHECK-fails if it does not pass
  // Verify(). The builder must not be used afterwards.
  std::unique_ptr<Graph> Build();

 private:
  std::unique_ptr<Graph> graph_;
  Node* last_node_ = nullptr;
  int64_t node_counter_ = 0;
  std::unordered_set<std::string> node_names_;
};

}  // namespace qtune::ir
