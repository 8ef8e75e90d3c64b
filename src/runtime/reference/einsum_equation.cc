#include "runtime/reference/einsum_equation.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/shape.h"

namespace qtune::runtime::reference {
namespace {

constexpr int kEllipsis = -1;
using Term = std::vector<int>;  // letters as their char codes, kEllipsis for "..."

Status EquationError(const ir::Node& node, const std::string& equation, const std::string& what) {
  return InvalidArgumentError(node.DebugName() + ": equation \"" + equation + "\": " + what +
                              "; see the ONNX Einsum operator for the syntax");
}

StatusOr<Term> ParseTerm(const ir::Node& node, const std::string& equation, const std::string& s) {
  Term term;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      term.push_back(c);
    } else if (c == '.') {
      if (s.compare(i, 3, "...") != 0) {
        return EquationError(node, equation, "a '.' that is not part of \"...\" in \"" + s + "\"");
      }
      if (std::count(term.begin(), term.end(), kEllipsis) > 0) {
        return EquationError(node, equation, "more than one \"...\" in \"" + s + "\"");
      }
      term.push_back(kEllipsis);
      i += 2;
    } else {
      return EquationError(node, equation,
                           std::string("invalid character '") + c + "' in \"" + s + "\"");
    }
  }
  return term;
}

std::vector<std::string> Split(const std::string& s, char separator) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == separator) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

bool HasEllipsis(const Term& term) {
  return std::find(term.begin(), term.end(), kEllipsis) != term.end();
}

}  // namespace

StatusOr<EinsumPlan> PlanEinsum(const ir::Node& node, const std::string& equation,
                                const std::vector<std::vector<int64_t>>& input_sizes) {
  std::string compact;
  for (char c : equation) {
    if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
  }
  const size_t arrow = compact.find("->");
  const bool explicit_output = arrow != std::string::npos;
  const std::string lhs = explicit_output ? compact.substr(0, arrow) : compact;
  const std::string rhs = explicit_output ? compact.substr(arrow + 2) : "";
  if (rhs.find("->") != std::string::npos) return EquationError(node, equation, "two \"->\"");
  const std::vector<std::string> parts = Split(lhs, ',');
  if (parts.size() != input_sizes.size()) {
    return EquationError(node, equation,
                         std::to_string(parts.size()) + " input terms for " +
                             std::to_string(input_sizes.size()) + " inputs");
  }
  std::vector<Term> terms;
  for (const std::string& part : parts) {
    ASSIGN_OR_RETURN(Term term, ParseTerm(node, equation, part));
    terms.push_back(std::move(term));
  }

  // Letter sizes, ellipsis rank and broadcast ellipsis sizes.
  std::map<int, int64_t> letter_size;
  std::map<int, int> letter_count;
  std::vector<int64_t> ellipsis_rank(terms.size(), 0);
  size_t max_ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& term = terms[i];
    const int64_t letters = static_cast<int64_t>(term.size()) - (HasEllipsis(term) ? 1 : 0);
    const int64_t rank = static_cast<int64_t>(input_sizes[i].size());
    if (HasEllipsis(term) ? rank < letters : rank != letters) {
      return EquationError(node, equation,
                           "term \"" + parts[i] + "\" does not fit input " + std::to_string(i) +
                               " of rank " + std::to_string(rank) + " [" +
                               SizesToString(input_sizes[i]) + "]");
    }
    ellipsis_rank[i] = rank - letters;
    max_ellipsis = std::max<size_t>(max_ellipsis, ellipsis_rank[i]);
  }
  std::vector<int64_t> ellipsis_sizes(max_ellipsis, 1);
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t axis = 0;
    for (int label : terms[i]) {
      if (label == kEllipsis) {
        for (int64_t e = 0; e < ellipsis_rank[i]; ++e, ++axis) {
          int64_t& size = ellipsis_sizes[max_ellipsis - ellipsis_rank[i] + e];
          const int64_t dim = input_sizes[i][axis];
          if (dim != 1 && size != 1 && dim != size) {
            return EquationError(node, equation,
                                 "the \"...\" dims of the inputs do not broadcast (input " +
                                     std::to_string(i) + " is [" + SizesToString(input_sizes[i]) +
                                     "])");
          }
          if (dim != 1) size = dim;
        }
        continue;
      }
      const int64_t dim = input_sizes[i][axis++];
      auto [it, inserted] = letter_size.emplace(label, dim);
      if (!inserted && it->second != dim) {
        return EquationError(node, equation,
                             std::string("letter '") + static_cast<char>(label) + "' is " +
                                 std::to_string(it->second) + " in one place and " +
                                 std::to_string(dim) + " in input " + std::to_string(i) + " [" +
                                 SizesToString(input_sizes[i]) + "]");
      }
      ++letter_count[label];
    }
  }

  // The output term.
  Term output;
  if (explicit_output) {
    ASSIGN_OR_RETURN(output, ParseTerm(node, equation, rhs));
    for (size_t k = 0; k < output.size(); ++k) {
      const int label = output[k];
      if (label == kEllipsis) continue;
      if (!letter_size.count(label)) {
        return EquationError(
            node, equation,
            std::string("output letter '") + static_cast<char>(label) + "' is in no input term");
      }
      if (std::count(output.begin(), output.end(), label) > 1) {
        return EquationError(
            node, equation,
            std::string("output letter '") + static_cast<char>(label) + "' is repeated");
      }
    }
    if (max_ellipsis > 0 && !HasEllipsis(output)) {
      return EquationError(node, equation,
                           "the inputs have \"...\" dims but the output has no \"...\"");
    }
  } else {
    bool any_ellipsis = false;
    for (const Term& term : terms) any_ellipsis = any_ellipsis || HasEllipsis(term);
    if (any_ellipsis) output.push_back(kEllipsis);
    for (const auto& [label, count] : letter_count) {  // std::map: ASCII order
      if (count == 1) output.push_back(label);
    }
  }

  // Loop dims: output dims, then summed letters. Ellipsis dim e is loop dim ellipsis_at + e.
  EinsumPlan plan;
  std::map<int, size_t> loop_dim;
  size_t ellipsis_at = 0;
  for (int label : output) {
    if (label == kEllipsis) {
      ellipsis_at = plan.loop_sizes.size();
      plan.loop_sizes.insert(plan.loop_sizes.end(), ellipsis_sizes.begin(), ellipsis_sizes.end());
    } else {
      loop_dim[label] = plan.loop_sizes.size();
      plan.loop_sizes.push_back(letter_size[label]);
    }
  }
  plan.num_output_dims = plan.loop_sizes.size();
  for (const Term& term : terms) {
    for (int label : term) {
      if (label == kEllipsis || loop_dim.count(label)) continue;
      loop_dim[label] = plan.loop_sizes.size();
      plan.loop_sizes.push_back(letter_size[label]);
    }
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int64_t> strides(plan.loop_sizes.size(), 0);
    const std::vector<int64_t>& sizes = input_sizes[i];
    std::vector<int64_t> element_stride(sizes.size(), 1);
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d) {
      element_stride[d] = element_stride[d + 1] * sizes[d + 1];
    }
    size_t axis = 0;
    for (int label : terms[i]) {
      if (label == kEllipsis) {
        for (int64_t e = 0; e < ellipsis_rank[i]; ++e, ++axis) {
          if (sizes[axis] == 1) continue;  // broadcast
          strides[ellipsis_at + max_ellipsis - ellipsis_rank[i] + e] += element_stride[axis];
        }
        continue;
      }
      strides[loop_dim[label]] += element_stride[axis++];
    }
    plan.input_strides.push_back(std::move(strides));
  }
  return plan;
}

}  // namespace qtune::runtime::reference
