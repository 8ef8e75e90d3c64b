#include "runtime/plan/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/shape.h"

namespace qtune::runtime {

int64_t PlanValue::byte_size() const {
  return NumElements(sizes) * static_cast<int64_t>(DataTypeSize(dtype));
}

std::string Plan::ToString(const PlanPrintOptions& options) const {
  auto describe = [&](int id) {
    if (id < 0) return std::string("-");
    const PlanValue& v = values[id];
    std::string layout = v.layout == Layout::kNhwc ? ":nhwc" : "";
    return fmt::format("{}[{}]{}", v.name, SizesToString(v.sizes), layout);
  };
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const PlanStep& s = steps[i];
    std::vector<std::string> ins, outs;
    for (int id : s.inputs) {
      if (id >= 0 && values[id].kind == PlanValue::Kind::kConstant) continue;
      ins.push_back(describe(id));
    }
    for (int id : s.outputs) outs.push_back(describe(id));
    out += fmt::format("{:>4} {:<18} {:<28} {:<34} {} -> {}\n", i, s.op_type, s.node_name,
                       s.kernel->Describe(), fmt::join(ins, ", "), fmt::join(outs, ", "));
    // QDQ fusion's note on a linear op that stayed float (fusion_pipeline.h).
    const ir::Node* node =
        graph != nullptr && !s.node_name.empty() ? graph->FindNode(s.node_name) : nullptr;
    if (node != nullptr && node->HasAttribute("qtune_not_int8")) {
      out += fmt::format("       not int8: {}\n", node->GetString("qtune_not_int8", ""));
    }
    if (options.explain_kernels) {
      if (s.precision != Precision::kFloat32) {
        out += fmt::format("       precision {}\n", PrecisionName(s.precision));
      }
      if (s.threads > 0) out += fmt::format("       threads {} (a small step)\n", s.threads);
      for (const KernelRejection& r : s.passed_over) {
        out += fmt::format("       passed over {}: {}\n", r.kernel, r.reason);
      }
    }
    // A control-flow step's bodies, indented below it.
    for (const Plan* nested : s.kernel->NestedPlans()) {
      std::string body = nested->ToString(options);
      for (size_t at = 0; at < body.size();) {
        const size_t end = body.find('\n', at);
        out += "       | " + body.substr(at, end - at) + "\n";
        at = end == std::string::npos ? body.size() : end + 1;
      }
    }
  }
  out += fmt::format("arena {} bytes, {} steps, {} views, {} threads\n", arena_bytes, steps.size(),
                     views, threads);
  return out;
}

namespace {

using ProfileRows = std::map<std::string, std::pair<double, int>>;  // key -> (ms per run, steps)

// Adds the steps of `plan` to `rows` and returns their time per run. `runs`: how often the
// model ran, or 0 for the top-level plan (each step's own count). A control-flow step counts
// its own time less its bodies', whose steps are added as rows of their own.
double AddProfileRows(const Plan& plan, int64_t runs, ProfileRows& rows) {
  double total = 0;
  for (const PlanStep& s : plan.steps) {
    const int64_t n = runs > 0 ? runs : s.profile_runs;
    if (s.profile_runs == 0 || n == 0) continue;
    double ms = s.profile_ms / static_cast<double>(n);
    total += ms;
    for (const Plan* nested : s.kernel->NestedPlans()) ms -= AddProfileRows(*nested, n, rows);
    auto& entry = rows[s.op_type + "  " + s.kernel->Describe()];
    entry.first += ms;
    entry.second += 1;
  }
  return total;
}

}  // namespace

std::string Plan::ProfileToString() const {
  ProfileRows by_kind;
  const double total = AddProfileRows(*this, 0, by_kind);
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(by_kind.begin(), by_kind.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::string out =
      fmt::format("{:<60} {:>6} {:>10} {:>6}\n", "op  implementation", "steps", "ms/run", "share");
  int step_count = 0;
  for (const auto& [key, value] : rows) {
    out += fmt::format("{:<60} {:>6} {:>10.3f} {:>5.1f}%\n", key, value.second, value.first,
                       total > 0 ? 100.0 * value.first / total : 0.0);
    step_count += value.second;
  }
  out += fmt::format("{:<60} {:>6} {:>10.3f}\n", "total", step_count, total);
  return out;
}

}  // namespace qtune::runtime
