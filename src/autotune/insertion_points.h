// Insertion points: where Q/DQ may go inside a leaf region, pattern-relative, so the same
// point list applies to every region of one pattern.
//
// A point is one input of one of the region's nodes: (index of the node in Region::nodes,
// input index). Quantizing it means: the tensor read there goes through Q -> DQ for that
// reader. For Conv, ConvTranspose, Gemm and MatMul, input 0 also quantizes the constant
// weight (input 1) per channel; the weight itself is never a point.
//
// Validity (a point is offered only when all hold):
//  * the reader can run in int8 in qtune's engine when its inputs are quantized: Conv,
//    ConvTranspose, Gemm, MatMul (activation inputs), Add, Mul, Concat, MaxPool,
//    AveragePool, GlobalAveragePool, Resize (input 0), Reshape, Flatten, Transpose,
//    Squeeze, Unsqueeze (input 0), Relu/LeakyRelu/Sigmoid/HardSigmoid/HardSwish/Tanh
//    (table lookups) -- the list lives in insertion_points.cc with the fusion it serves;
//  * the tensor is float32, not an initializer or a Constant output, not a bias, not a
//    Resize scales/sizes or Reshape shape input;
//  * not a Relu (or Clip) that reads a Conv/ConvTranspose/Gemm output directly (fused);
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

ResolvedPoint Resolve(const RegionTree& tree, int region_id, const InsertionPoint& point);

}  // namespace qtune::autotune
