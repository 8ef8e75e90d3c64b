// Pattern signatures: regions with the same signature are structurally the same, so one
// measured insertion scheme (pattern-relative) serves every region of that pattern.
//
// A leaf's signature lists its nodes in RegionTree order, each as op type, its attributes
// (sorted "k=v"; tensor attributes as dtype and sizes, subgraphs as a digest), and where
// each input comes from: "n<j>.<k>" for output k of the region's own node j, "ext" for a
// tensor from outside the region, "w" for an initializer or a Constant's output (with its
// shape when `include_shapes`), "-" for an omitted input. With `include_shapes` the
// signature also carries every node's output shapes (needs shape-inferred value types).
// It ends with the leaf's CandidatePoints ("|points:j.i,..."): validity also depends on
// facts outside the lines above (dtypes, tiny tensors, the producer of an external
// input), and carrying the points makes equal signatures imply equal point lists.
// A composite's signature is "COMPOSITE(" + child signatures joined by "+" + ")".
#pragma once

#include <string>

#include "autotune/region.h"
#include "ir/graph.h"

namespace qtune::autotune {

struct SignatureOptions {
  bool include_shapes = false;  // --shape-aware
};

std::string PatternSignature(const RegionTree& tree, int region_id,
                             const SignatureOptions& options);

// Short stable id of a signature: the first 12 hex digits of its SHA-256.
std::string PatternId(const std::string& signature);

}  // namespace qtune::autotune
