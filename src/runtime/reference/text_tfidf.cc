// TfIdfVectorizer (opset 9): counts the n-grams of an integer sequence that appear in a
// pool, with skips between their tokens. X is [C] or [N, C] (int32 or int64); Y is float
// [max(ngram_indexes) + 1] or [N, that]. The pool (pool_int64s) lists the 1-grams, then
// the 2-grams, ... (ngram_counts[i]: where the (i+1)-grams start); the j-th n-gram of the
// pool counts into Y[..., ngram_indexes[j]]. For each skip s in [0, max_skip_count] and
// each start position, the tokens start, start+(s+1), ... form n-grams of every length in
// [min_gram_length, max_gram_length]; 1-grams do not depend on s and count once, as in
// ONNX's reference and ONNX Runtime. mode TF counts, IDF gives weights[j] (or 1) for a
// present n-gram, TFIDF multiplies the count by weights[j]. String pools are unsupported
// (qtune tensors hold no strings).
#include <algorithm>
#include <map>
#include <memory>

#include "runtime/reference/misc_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

// A trie of the pool's n-grams: id is 1 + the n-gram's index in the pool, 0 for a prefix
// that is no n-gram of its own.
struct NgramNode {
  int64_t id = 0;
  std::map<int64_t, std::unique_ptr<NgramNode>> next;
};

struct Pool {
  NgramNode root;
  int64_t num_ngrams = 0;
};

StatusOr<Pool> BuildPool(const ir::Node& node) {
  const std::vector<int64_t> pool = node.GetInts("pool_int64s", {});
  const std::vector<int64_t> counts = node.GetInts("ngram_counts", {});
  Pool result;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) ||
        (end - begin) % n != 0) {
      return NodeError(node, "ngram_counts " + std::to_string(begin) + " for " + std::to_string(n) +
                                 "-grams does not split pool_int64s (" +
                                 std::to_string(pool.size()) + " items) into " + std::to_string(n) +
                                 "-grams");
    }
    for (int64_t at = begin; at < end; at += n) {
      NgramNode* cursor = &result.root;
      for (int64_t k = 0; k < n; ++k) {
        auto& child = cursor->next[pool[at + k]];
        if (!child) child = std::make_unique<NgramNode>();
        cursor = child.get();
      }
      cursor->id = ++result.num_ngrams;
    }
  }
  return result;
}

StatusOr<std::vector<Tensor>> TfIdfVectorizer(const KernelArgs& a) {
  RETURN_IF_ERROR(CheckInputCount(a, 1, 1));
  const Tensor& x = a.inputs[0];
  if (x.dtype() != DataType::kInt32 && x.dtype() != DataType::kInt64) {
    return UnsupportedType(a.node, x.dtype());
  }
  if (x.rank() != 1 && x.rank() != 2) {
    return NodeError(a.node,
                     "input is " + x.DebugString() + "; TfIdfVectorizer takes [C] or [N, C]");
  }
  if (!a.node.GetInts("pool_int64s", {}).size() && a.node.HasAttribute("pool_strings")) {
    return NodeUnimplemented(a.node, "pool_strings needs string tensors, which qtune lacks");
  }
  ASSIGN_OR_RETURN(Pool pool, BuildPool(a.node));
  const std::vector<int64_t> indexes = a.node.GetInts("ngram_indexes", {});
  const std::vector<float> weights = a.node.GetFloats("weights", {});
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != pool.num_ngrams) {
    return NodeError(a.node, "weights has " + std::to_string(weights.size()) + " entries for " +
                                 std::to_string(pool.num_ngrams) + " n-grams");
  }
  if (static_cast<int64_t>(indexes.size()) != pool.num_ngrams) {
    return NodeError(a.node, "ngram_indexes has " + std::to_string(indexes.size()) +
                                 " entries for " + std::to_string(pool.num_ngrams) + " n-grams");
  }
  int64_t width = 0;
  for (int64_t i : indexes) {
    if (i < 0) return NodeError(a.node, "ngram_indexes has a negative entry");
    width = std::max(width, i + 1);
  }
  const int64_t min_n = a.node.GetInt("min_gram_length", 1);
  const int64_t max_n = a.node.GetInt("max_gram_length", 1);
  const int64_t max_skip = a.node.GetInt("max_skip_count", 0);
  const std::string mode = a.node.GetString("mode", "TF");
  if (min_n < 1 || max_n < min_n || max_skip < 0) {
    return NodeError(a.node, "needs 1 <= min_gram_length <= max_gram_length, max_skip_count >= 0");
  }
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
    return NodeError(a.node, "mode '" + mode + "' is not TF, IDF or TFIDF");
  }
  const int64_t rows = x.rank() == 2 ? x.size(0) : 1;
  const int64_t cols = x.size(x.rank() - 1);
  std::vector<int64_t> out_sizes =
      x.rank() == 2 ? std::vector<int64_t>{rows, width} : std::vector<int64_t>{width};
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kFloat32, out_sizes));
  float* out = y.data<float>();
  std::fill(out, out + y.num_elements(), 0.0f);
  std::vector<int64_t> counts(static_cast<size_t>(pool.num_ngrams) + 1);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0);
    auto token = [&](int64_t c) {
      const int64_t i = r * cols + c;
      return x.dtype() == DataType::kInt32 ? int64_t{x.data<int32_t>()[i]} : x.data<int64_t>()[i];
    };
    int64_t first_n = min_n;
    for (int64_t distance = 1; distance <= max_skip + 1; ++distance) {
      for (int64_t start = 0; start < cols; ++start) {
        if (start + distance * (first_n - 1) >= cols) break;
        const NgramNode* cursor = &pool.root;
        int64_t at = start;
        for (int64_t n = 1; n <= max_n && at < cols && !cursor->next.empty(); ++n, at += distance) {
          auto hit = cursor->next.find(token(at));
          if (hit == cursor->next.end()) break;
          cursor = hit->second.get();
          if (n >= first_n && cursor->id != 0) ++counts[cursor->id];
        }
      }
      // 1-grams do not depend on the skip: count them once.
      if (first_n == 1 && ++first_n > max_n) break;
    }
    for (int64_t id = 1; id <= pool.num_ngrams; ++id) {
      if (counts[id] == 0) continue;
      const float weight = weights.empty() ? 1.0f : weights[id - 1];
      const float value = mode == "TF"    ? static_cast<float>(counts[id])
                          : mode == "IDF" ? weight
                                          : static_cast<float>(counts[id]) * weight;
      out[r * width + indexes[id - 1]] = value;
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

void RegisterTfIdfKernels(ReferenceRegistry& registry) {
  registry.Register("TfIdfVectorizer", TfIdfVectorizer);
}

}  // namespace qtune::runtime::reference
