// Insertion points: where Q/DQ may go inside a leaf region, pattern-relative, so the same
// point list applies to every region of one pattern.
//
// A point is one input of one of the region's nodes: (index of the node in Region::nodes,
// input index). Quantizing it means: the tensor read there goes through Q -> DQ for that
// reader. For Conv, ConvTranspose, Gemm and MatMul, input 0 also quantizes the constant
// weight (input 1) per channel; the weight itself is never a point.
//
// Validity (a point is offered only when all hold):
//  * the reader runs in int8 in qtune's engine when that input is quantized (the table
//    in insertion_points.cc names the fusion each entry serves):
//    - Conv, ConvTranspose (group 1), Gemm (transA 0, alpha = beta = 1), MatMul: input 0,
//      when input 1 is a constant weight (QConv / QConvTranspose / QMatMul; the engine has
//      no activation x activation int8 MatMul);
//    - Add of two activations of equal sizes: both inputs (QAdd, QConv's residual sum);
//    - MaxPool (indices unread), AveragePool, GlobalAveragePool, Reshape, Flatten,
//      Squeeze, Unsqueeze, Transpose, Resize (mode nearest): input 0; Concat: every input
//      (int8 pass-through);
//    - elementwise ops of one tensor whose other inputs are one-element float constants
//      (Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh, Add, Sub, Mul, Div,
//      Pow, Max, Min, Exp, Abs, Neg, Sqrt, Erf, Elu, Selu, Softplus): that tensor (QLookup);
//  * the tensor is float32 (or untyped), not an initializer or a Constant output (so never
//    a weight, bias, Resize scales/sizes or Reshape shape);
//  * not an activation (Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh) that
//    is the sole reader of a Conv/ConvTranspose/Gemm/MatMul output, nor a Relu that is the
//    sole reader of an Add output: the engine fuses those into their producer;
//  * a statically known tensor with fewer than 8 elements is skipped.
#pragma once

#include <string>
#include <vector>

#include "autotune/region.h"
#include "ir/graph.h"

namespace qtune::autotune {

struct InsertionPoint {
  int node_in_region = 0;  // index into Region::nodes
  int input_index = 0;
  bool operator==(const InsertionPoint&) const = default;
  auto operator<=>(const InsertionPoint&) const = default;
};

// A point resolved to the graph: the reader node (by name), the input, and the tensor.
struct ResolvedPoint {
  std::string node;
  int input_index = 0;
  std::string tensor;
  bool operator==(const ResolvedPoint&) const = default;
  auto operator<=>(const ResolvedPoint&) const = default;
};

// The valid points of a leaf region, sorted. Regions with equal signatures get equal
// lists. REQUIRES: `region_id` is a leaf of `tree`.
std::vector<InsertionPoint> CandidatePoints(const RegionTree& tree, int region_id);

// The graph location of `point` in leaf `region_id` (the node name is empty for an unnamed
// node). REQUIRES: `point` indexes a node of that leaf and one of the node's inputs.
ResolvedPoint Resolve(const RegionTree& tree, int region_id, const InsertionPoint& point);

}  // namespace qtune::autotune
