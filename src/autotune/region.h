// Regions: a partition of a graph into leaf regions (every node in exactly one leaf), and
// composite regions above them, the unit the autotuner searches over (docs/autotune.md).
//
// Leaf regions are grown as ModelOpt's partitioner grows them, without its coverage and
// overlap defects:
//  * a divergent node (its outputs read by more than one distinct node) whose branches
//    converge within `max_converge_distance` steps (longest path) forms one region with
//    the nodes between and the convergence node (a residual block's tail:
//    Conv -> [.., ..] -> Add), provided no node in between has a reader outside it;
//  * otherwise a sequence grows forward through single-reader chains and stops at the
//    first divergent node (included, unless it opens a converging block of its own), at a
//    node with another producer not yet placed, or at `max_sequence_size` nodes;
//  * every node of the graph lands in exactly one leaf; initializers are not nodes and
//    belong to no region; a Constant node (none after passes::RunPipeline) joins the leaf
//    of its first reader and sits right before that reader in RegionTree::order.
// Cost: about O(N log N) plus, per divergent node, the nodes within max_converge_distance.
// Composite regions group consecutive leaves (in topological order) up to
// `max_composite_size` leaves; they own no nodes directly.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::autotune {

struct RegionOptions {
  int max_sequence_size = 10;      // nodes in a sequence leaf
  int max_converge_distance = 10;  // steps from a divergent node to its convergence node
  int max_composite_size = 4;      // leaves per composite region
};

struct Region {
  enum class Kind { kLeaf, kComposite };
  int id = 0;  // index in RegionTree::regions
  Kind kind = Kind::kLeaf;
  std::vector<int> nodes;     // leaf: its nodes, as indices into RegionTree::order, ascending
  std::vector<int> children;  // composite: leaf region ids, ascending
  int parent = -1;            // leaf: its composite, or -1
};

struct RegionTree {
  // The graph's nodes in topological order (borrowed: valid while the graph lives and is
  // not mutated). Node index i below means order[i].
  std::vector<const ir::Node*> order;
  std::vector<Region> regions;    // leaves first (in topological order of their first node),
                                  // then composites
  std::vector<int> leaf_of_node;  // order index -> leaf region id
  int num_leaves = 0;
};

// Errors: InvalidArgument for a graph that is not a DAG (names a node on the cycle), or for
// max_sequence_size or max_composite_size below 1 or max_converge_distance below 0.
// A run of leaves too short for a composite (one leaf) gets none (parent -1).
StatusOr<RegionTree> PartitionRegions(const ir::Graph& graph, const RegionOptions& options);

// Human-readable tree (for --verbose and debugging): one line per region with its nodes.
std::string RegionTreeToString(const RegionTree& tree);

}  // namespace qtune::autotune
