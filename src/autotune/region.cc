#include "autotune/region.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>

namespace qtune::autotune {
namespace {

bool IsConstantNode(const ir::Node& node) {
  return node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx") &&
         node.num_inputs() == 0 && node.implicit_inputs().empty();
}

// The nodes that read any output of `node`, including through subgraph attributes.
std::vector<const ir::Node*> Readers(const ir::Node& node) {
  std::vector<const ir::Node*> readers;
  for (const ir::Value* out : node.outputs()) {
    if (out == nullptr) continue;
    for (const ir::Use& use : out->uses()) readers.push_back(use.node);
  }
  return readers;
}

// Graph::TopologicalOrder(), except that every Constant node with a reader comes right
// before its first reader (in that reader's input order), so that a Constant's position
// inside its leaf does not depend on where the exporter happened to put it.
StatusOr<std::vector<const ir::Node*>> RegionOrder(const ir::Graph& graph) {
  ASSIGN_OR_RETURN(std::vector<ir::Node*> topo, graph.TopologicalOrder());
  std::unordered_map<const ir::Node*, size_t> topo_index;
  for (size_t i = 0; i < topo.size(); ++i) topo_index[topo[i]] = i;
  std::unordered_map<const ir::Node*, const ir::Node*> first_reader;  // Constant -> reader
  for (const ir::Node* node : topo) {
    if (!IsConstantNode(*node)) continue;
    const ir::Node* first = nullptr;
    for (const ir::Node* reader : Readers(*node)) {
      if (first == nullptr || topo_index[reader] < topo_index[first]) first = reader;
    }
    if (first != nullptr) first_reader[node] = first;
  }
  std::vector<const ir::Node*> order;
  order.reserve(topo.size());
  auto emit_constants_of = [&](const ir::Node* reader, const std::vector<ir::Value*>& values) {
    for (const ir::Value* value : values) {
      const ir::Node* producer = value != nullptr ? value->producer() : nullptr;
      if (producer == nullptr) continue;
      auto it = first_reader.find(producer);
      if (it == first_reader.end() || it->second != reader) continue;
      order.push_back(producer);
      first_reader.erase(it);  // emitted once even when read twice
    }
  };
  for (const ir::Node* node : topo) {
    if (IsConstantNode(*node)) {
      if (!first_reader.count(node)) order.push_back(node);  // unread: keeps its place
      continue;
    }
    emit_constants_of(node, node->inputs());
    emit_constants_of(node, node->implicit_inputs());
    order.push_back(node);
  }
  return order;
}

// Grows the leaves over dense node indices. Constant nodes take no part in growing; they
// join the leaf of their first reader afterwards.
class Partitioner {
 public:
  Partitioner(const std::vector<const ir::Node*>& order, const RegionOptions& options)
      : order_(order), options_(options) {
    const int n = static_cast<int>(order.size());
    std::unordered_map<const ir::Node*, int> index;
    for (int i = 0; i < n; ++i) index[order[i]] = i;
    readers_.resize(n);
    producers_.resize(n);
    constant_.resize(n);
    for (int i = 0; i < n; ++i) {
      constant_[i] = IsConstantNode(*order[i]);
      for (const ir::Node* reader : Readers(*order[i])) readers_[i].push_back(index.at(reader));
      SortUnique(readers_[i]);
      auto add_producers = [&](const std::vector<ir::Value*>& values) {
        for (const ir::Value* value : values) {
          if (value == nullptr || value->producer() == nullptr) continue;
          const int p = index.at(value->producer());
          if (!constant_[p]) producers_[i].push_back(p);
        }
      };
      add_producers(order[i]->inputs());
      add_producers(order[i]->implicit_inputs());
      SortUnique(producers_[i]);
    }
    leaf_of_.assign(n, -1);
    stamp_.assign(n, 0);
    in_set_.assign(n, 0);
    distance_.assign(n, 0);
    convergence_.resize(n);
    convergence_known_.assign(n, 0);
  }

  // Returns the leaves' node lists, each ascending, in the order they were made.
  std::vector<std::vector<int>> Run() {
    const int n = static_cast<int>(order_.size());
    for (int i = 0; i < n; ++i) {
      if (constant_[i] || leaf_of_[i] >= 0) continue;
      if (Divergent(i)) {
        const std::optional<std::vector<int>>& block = Convergence(i);
        AddLeaf(block && AllFree(*block) ? *block : std::vector<int>{i});
      } else {
        AddLeaf(GrowSequence(i));
      }
    }
    for (int i = 0; i < n; ++i) {  // Constants join their first reader's leaf
      if (!constant_[i]) continue;
      if (readers_[i].empty()) {
        AddLeaf({i});
      } else {
        const int leaf = leaf_of_[readers_[i].front()];
        leaves_[leaf].push_back(i);
        leaf_of_[i] = leaf;
      }
    }
    for (std::vector<int>& leaf : leaves_) std::sort(leaf.begin(), leaf.end());
    return std::move(leaves_);
  }

 private:
  static void SortUnique(std::vector<int>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  // Divergent: the node's outputs are read by more than one distinct node.
  bool Divergent(int i) const { return readers_[i].size() > 1; }

  bool AllFree(const std::vector<int>& nodes) const {
    return std::all_of(nodes.begin(), nodes.end(), [&](int v) { return leaf_of_[v] < 0; });
  }

  void AddLeaf(std::vector<int> nodes) {
    const int id = static_cast<int>(leaves_.size());
    for (int v : nodes) leaf_of_[v] = id;
    leaves_.push_back(std::move(nodes));
  }

  // From `start` forward through single-reader chains: stops at a divergent node
  // (included, unless it starts a converging block of its own), a reader already in a
  // leaf, a reader with another producer not yet placed (a join that a later start may
  // need), or max_sequence_size nodes.
  std::vector<int> GrowSequence(int start) {
    std::vector<int> seq = {start};
    int cur = start;
    while (static_cast<int>(seq.size()) < options_.max_sequence_size && !Divergent(cur) &&
           readers_[cur].size() == 1) {
      const int next = readers_[cur].front();
      if (leaf_of_[next] >= 0) break;
      bool join_pending = false;
      for (int p : producers_[next]) join_pending |= p != cur && leaf_of_[p] < 0;
      if (join_pending) break;
      if (Divergent(next)) {
        const std::optional<std::vector<int>>& block = Convergence(next);
        if (block && AllFree(*block)) break;
      }
      seq.push_back(next);
      cur = next;
    }
    return seq;
  }

  // The block that divergent node `d` opens: `d`, every node on a path from `d` to the
  // first node where all its branches meet, and that node, when no node in between has a
  // reader outside the block and the meeting node is at most max_converge_distance
  // steps (longest path) from `d`. Nodes are visited in topological order, so the work
  // is bounded by the nodes within that distance. Memoized per node.
  const std::optional<std::vector<int>>& Convergence(int d) {
    if (!convergence_known_[d]) {
      convergence_[d] = FindConvergence(d);
      convergence_known_[d] = 1;
    }
    return convergence_[d];
  }

  std::optional<std::vector<int>> FindConvergence(int d) {
    const int max_distance = options_.max_converge_distance;
    if (!Divergent(d) || max_distance < 1) return std::nullopt;
    ++current_stamp_;
    auto touch = [&](int v) {
      if (stamp_[v] != current_stamp_) {
        stamp_[v] = current_stamp_;
        in_set_[v] = 0;
        distance_[v] = 0;
      }
    };
    std::priority_queue<int, std::vector<int>, std::greater<int>> frontier;
    std::vector<int> block = {d};
    touch(d);
    in_set_[d] = 1;
    auto push_readers = [&](int v) {
      for (int r : readers_[v]) {
        if (stamp_[r] == current_stamp_) continue;  // already queued
        touch(r);
        frontier.push(r);
      }
    };
    auto distance_of = [&](int v) {
      int longest = 0;
      for (int p : producers_[v]) {
        if (stamp_[p] == current_stamp_ && in_set_[p]) longest = std::max(longest, distance_[p]);
      }
      return longest + 1;
    };
    push_readers(d);
    while (frontier.size() > 1) {
      const int v = frontier.top();
      frontier.pop();
      distance_[v] = distance_of(v);
      // The meeting node would be further than max_distance, or a branch ends here.
      if (distance_[v] >= max_distance || readers_[v].empty()) return std::nullopt;
      in_set_[v] = 1;
      block.push_back(v);
      push_readers(v);
    }
    if (frontier.empty()) return std::nullopt;
    block.push_back(frontier.top());
    std::sort(block.begin(), block.end());
    return block;
  }

  const std::vector<const ir::Node*>& order_;
  const RegionOptions& options_;
  std::vector<std::vector<int>> readers_;    // distinct readers, ascending
  std::vector<std::vector<int>> producers_;  // distinct non-Constant producers
  std::vector<char> constant_;
  std::vector<int> leaf_of_;  // -1 while unplaced
  std::vector<std::vector<int>> leaves_;
  // Scratch for FindConvergence, valid where stamp_ == current_stamp_.
  std::vector<int> stamp_;
  std::vector<char> in_set_;
  std::vector<int> distance_;
  int current_stamp_ = 0;
  std::vector<std::optional<std::vector<int>>> convergence_;
  std::vector<char> convergence_known_;
};

}  // namespace

StatusOr<RegionTree> PartitionRegions(const ir::Graph& graph, const RegionOptions& options) {
  if (options.max_sequence_size < 1 || options.max_composite_size < 1 ||
      options.max_converge_distance < 0) {
    return InvalidArgumentError(
        "region options: max_sequence_size and max_composite_size must be at least 1 and "
        "max_converge_distance at least 0 (got " +
        std::to_string(options.max_sequence_size) + ", " +
        std::to_string(options.max_composite_size) + ", " +
        std::to_string(options.max_converge_distance) + ")");
  }
  RegionTree tree;
  ASSIGN_OR_RETURN(tree.order, RegionOrder(graph));
  std::vector<std::vector<int>> leaves = Partitioner(tree.order, options).Run();
  std::sort(leaves.begin(), leaves.end(),
            [](const std::vector<int>& a, const std::vector<int>& b) { return a[0] < b[0]; });
  tree.num_leaves = static_cast<int>(leaves.size());
  tree.leaf_of_node.assign(tree.order.size(), -1);
  for (int id = 0; id < tree.num_leaves; ++id) {
    Region leaf;
    leaf.id = id;
    leaf.kind = Region::Kind::kLeaf;
    leaf.nodes = std::move(leaves[id]);
    for (int v : leaf.nodes) tree.leaf_of_node[v] = id;
    tree.regions.push_back(std::move(leaf));
  }
  // Composites: runs of consecutive leaves; a run of one leaf gets no composite.
  for (int first = 0; first < tree.num_leaves; first += options.max_composite_size) {
    const int last = std::min(tree.num_leaves, first + options.max_composite_size);
    if (last - first < 2) continue;
    Region composite;
    composite.id = static_cast<int>(tree.regions.size());
    composite.kind = Region::Kind::kComposite;
    for (int leaf = first; leaf < last; ++leaf) {
      composite.children.push_back(leaf);
      tree.regions[leaf].parent = composite.id;
    }
    tree.regions.push_back(std::move(composite));
  }
  return tree;
}

std::string RegionTreeToString(const RegionTree& tree) {
  std::string out;
  for (const Region& region : tree.regions) {
    if (region.kind == Region::Kind::kLeaf) {
      out += "leaf " + std::to_string(region.id);
      if (region.parent >= 0) out += " (in " + std::to_string(region.parent) + ")";
      out += ":";
      for (int v : region.nodes) {
        const ir::Node* node = tree.order[v];
        out += " " + std::to_string(v) + ":" + node->op_type();
        if (!node->name().empty()) out += "'" + node->name() + "'";
      }
    } else {
      out += "composite " + std::to_string(region.id) + ": leaves";
      for (int child : region.children) out += " " + std::to_string(child);
    }
    out += "\n";
  }
  return out;
}

}  // namespace qtune::autotune
