#include "quant/auto_latency.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "quant/auto_sensitivity.h"

namespace qtune::quant {
namespace {

std::map<std::string, std::vector<int64_t>> Sizes(const runtime::NamedTensors& inputs) {
  std::map<std::string, std::vector<int64_t>> sizes;
  for (const auto& [name, tensor] : inputs) sizes[name] = tensor.sizes();
  return sizes;
}

runtime::NamedTensors Copy(const runtime::NamedTensors& inputs) {
  runtime::NamedTensors out;
  for (const auto& [name, tensor] : inputs) out.emplace_back(name, tensor.Clone());
  return out;
}

// Names that identify a group: its nodes, and the values of sites read only by it.
std::map<std::string, size_t> Owners(const QuantPlan& plan, const std::vector<AutoGroup>& groups) {
  std::map<std::string, size_t> owner;
  std::map<std::string, size_t> node_group;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const std::string& n : groups[g].nodes) owner[n] = node_group[n] = g;
  }
  for (const QuantSite& site : plan.sites) {
    std::set<size_t> readers;
    for (const auto& [node, input] : site.consumers) {
      auto it = node_group.find(node);
      if (it != node_group.end()) readers.insert(it->second);
    }
    if (readers.size() == 1 && !owner.count(site.value)) owner[site.value] = *readers.begin();
  }
  return owner;
}

// The group of a plan step: the longest owner name that is the step's name or a prefix of
// it ending before a '_'; -1 for none.
int64_t StepGroup(const std::map<std::string, size_t>& owner, const std::string& step) {
  if (auto it = owner.find(step); it != owner.end()) return static_cast<int64_t>(it->second);
  for (size_t pos = step.rfind('_'); pos != std::string::npos && pos > 0;
       pos = step.rfind('_', pos - 1)) {
    if (auto it = owner.find(step.substr(0, pos)); it != owner.end()) {
      return static_cast<int64_t>(it->second);
    }
    if (pos == 0) break;
  }
  return -1;
}

// Per group (and the last entry: unattributed), ms per run of `graph`.
StatusOr<std::vector<double>> ProfileSteps(const ir::Graph& graph,
                                           const std::map<std::string, size_t>& owner,
                                           size_t num_groups, const runtime::NamedTensors& inputs,
                                           const LatencyOptions& options) {
  runtime::SessionOptions session_options;
  session_options.threads = options.threads;
  session_options.profile = true;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(graph, session_options));
  ASSIGN_OR_RETURN(const runtime::Plan* plan, session->Prepare(Sizes(inputs)));
  const runtime::NamedTensors feed = Copy(inputs);
  RETURN_IF_ERROR(session->Run(feed).status());  // warm-up
  std::vector<double> before;
  for (const runtime::PlanStep& step : plan->steps) before.push_back(step.profile_ms);
  const int runs = std::max(1, options.runs);
  for (int r = 0; r < runs; ++r) RETURN_IF_ERROR(session->Run(feed).status());
  std::vector<double> ms(num_groups + 1, 0.0);
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    const int64_t g = StepGroup(owner, plan->steps[s].node_name);
    ms[g < 0 ? num_groups : static_cast<size_t>(g)] +=
        (plan->steps[s].profile_ms - before[s]) / runs;
  }
  return ms;
}

}  // namespace

StatusOr<GroupLatencies> ProfileGroupLatencies(const ir::Graph& float_graph, const QuantPlan& plan,
                                               const std::vector<AutoGroup>& groups,
                                               const runtime::NamedTensors& inputs,
                                               const LatencyOptions& options) {
  const std::map<std::string, size_t> owner = Owners(plan, groups);
  std::set<AutoFormat> formats;
  for (const AutoGroup& g : groups) formats.insert(g.formats.begin(), g.formats.end());
  formats.insert(AutoFormat::kFp32);
  // profiled[f][g]: ms of group g in the model where every group that can is in f.
  std::map<AutoFormat, std::vector<double>> profiled;
  for (AutoFormat f : formats) {
    std::vector<AutoFormat> choice;
    for (const AutoGroup& g : groups) {
      const bool candidate = std::count(g.formats.begin(), g.formats.end(), f) > 0;
      choice.push_back(candidate                               ? f
                       : g.formats.back() == AutoFormat::kFp32 ? AutoFormat::kFp32
                                                               : g.formats.front());
    }
    AppliedFormats applied = ApplyFormats(float_graph, plan, groups, choice);
    ASSIGN_OR_RETURN(auto graph, ExportApplied(float_graph, applied));
    auto ms = ProfileSteps(*graph, owner, groups.size(), inputs, options);
    if (!ms.ok()) {
      return ms.status().WithContext(std::string("profiling every layer in ") + AutoFormatName(f));
    }
    profiled[f] = std::move(*ms);
  }
  GroupLatencies out;
  out.unattributed_ms = profiled[AutoFormat::kFp32].back();
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<double> row;
    const bool has_int8 =
        std::count(groups[g].formats.begin(), groups[g].formats.end(), AutoFormat::kInt8) > 0;
    for (AutoFormat f : groups[g].formats) {
      const AutoFormat timed = f == AutoFormat::kFp8 && has_int8 ? AutoFormat::kInt8 : f;
      row.push_back(profiled[timed][g]);
    }
    out.ms.push_back(std::move(row));
  }
  return out;
}

StatusOr<double> ModelLatencyMs(const ir::Graph& graph, const runtime::NamedTensors& inputs,
                                const LatencyOptions& options) {
  runtime::SessionOptions session_options;
  session_options.threads = options.threads;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(graph, session_options));
  const runtime::NamedTensors feed = Copy(inputs);
  RETURN_IF_ERROR(session->Run(feed).status());
  std::vector<double> ms;
  for (int r = 0; r < std::max(1, options.runs); ++r) {
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(session->Run(feed).status());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace qtune::quant
