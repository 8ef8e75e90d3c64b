// Regions: a partition of a graph into leaf regions (every node in exactly one leaf), and
// composite regions above them, the unit the autotuner searches over (docs/autotune.md).
//
// Leaf regions are grown as ModelOpt's partitioner grows them, without its coverage and
// overlap defects:
//  * a divergent node (an output read by more than one node) whose branches converge
//    within `max_converge_distance` steps forms one region with the nodes between and the
//    convergence node (a residual block's tail: Conv -> [.., ..] -> Add);
//  * otherwise a sequence grows forward through single-reader chains and stops at the
//    first divergent node (included) or at `max_sequence_size` nodes;
//  * every node of the graph lands in exactly one leaf; constants/initializers are not
//    nodes and belong to no region.
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
  int id = 0;                 // index in RegionTree::regions
  Kind kind = Kind::kLeaf;
  std::vector<int> nodes;     // leaf: its nodes, as indices into RegionTree::order, ascending
  std::vector<int> children;  // composite: leaf region ids, ascending
  int parent = -1;            // leaf: its composite, or -1
};

struct RegionTree {
  // The graph's nodes in topological order (borrowed: valid while the graph lives and is
  // not mutated). Node index i below means order[i].
  std::vector<const ir::Node*> order;
  std::vector<Region> regions;  // leaves first (in topological order of their first node),
                                // then composites
  std::vector<int> leaf_of_node;  // order index -> leaf region id
  int num_leaves = 0;
};

// Errors: a graph that is not a DAG (names a node on the cycle).
StatusOr<RegionTree> PartitionRegions(const ir::Graph& graph, const RegionOptions& options);

// Human-readable tree (for --verbose and debugging): one line per region with its nodes.
std::string RegionTreeToString(const RegionTree& tree);

}  // namespace qtune::autotune
