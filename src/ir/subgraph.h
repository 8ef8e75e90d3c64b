// Subgraph bodies (If branches, Loop and Scan bodies) as Graphs of their own.
//
// Subgraph attributes are kept as serialized onnx.GraphProto bytes (attribute.h). To run
// or rewrite a body, ParseSubgraph turns it into a Graph whose inputs are the body's formal
// inputs followed by the outer-scope values it reads (by their outer names), so a body is
// an ordinary graph the compiler can compile for concrete sizes. Outer values known at
// compile time (weights) can be given as constants: they become initializers of the body.
//
// SubgraphAttribute goes the other way for tests and passes: a Graph whose trailing inputs
// stand for outer-scope values becomes a graph attribute that reads those values by name.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/attribute.h"
#include "ir/graph.h"

namespace qtune::ir {

// An outer-scope value a body may read: its type, and its value when known at compile time.
struct OuterValue {
  DataType dtype = DataType::kUndefined;
  Tensor constant;  // valid: the body gets it as an initializer instead of an input
};

struct SubgraphContext {
  // The enclosing model's facts (opset imports, IR version); the body shares them.
  const ModelInfo* model = nullptr;
  // Element types of the body's formal inputs, as the owning op defines them (Loop: int64
  // iteration number, bool condition, the carried values' types). kUndefined keeps the
  // type the body declares. Declared shapes are dropped: sizes come at compile time.
  std::vector<DataType> formal_input_types;
  // Keep the body's formal inputs exactly as declared (types and shapes; every one must
  // have an element type) and ignore formal_input_types: for rewriting a body, not
  // running it.
  bool keep_declared_inputs = false;
  // Every outer-scope value the body may read, by name (the owner's implicit inputs).
  std::map<std::string, OuterValue> outer;
  // Names the body in errors, e.g. "then_branch of If 'check_sr'".
  std::string what;
};

// Parses a body. The result's inputs: the formal inputs in order, then the non-constant
// outer-scope values the body reads (OuterScopeNames order). InvalidArgument naming
// context.what when the bytes are not a GraphProto, the body reads an outer name that is
// not in context.outer, or has fewer/more formal inputs than context.formal_input_types.
StatusOr<std::unique_ptr<Graph>> ParseSubgraph(const std::string& bytes,
                                               const SubgraphContext& context);

// The outer-scope names a serialized body reads (recursively through nested bodies), in
// order of first use. InvalidArgument when the bytes are not a GraphProto.
StatusOr<std::vector<std::string>> SubgraphOuterNames(const std::string& bytes);

// A graph attribute holding `body` with its last `num_outer_inputs` inputs removed: the
// body then reads those values from the enclosing scope by their names. The caller sets
// them as the owning node's implicit inputs (Graph::SetImplicitInputs).
StatusOr<Attribute> SubgraphAttribute(std::string name, const Graph& body, size_t num_outer_inputs);

}  // namespace qtune::ir
