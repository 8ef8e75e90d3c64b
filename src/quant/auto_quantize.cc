#include "quant/auto_quantize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "core/logging.h"
#include "core/progress.h"
#include "quant/auto_search.h"
#include "quant/auto_sensitivity.h"

namespace qtune::quant {
namespace {

constexpr double kMaxNoise = 1e12;  // a NaN/inf output: never chosen while anything else fits

struct Problem {
  std::vector<KnapsackItem> items;        // costs of the cost model
  std::vector<std::vector<double>> bits;  // [group][k]: bits x weights counted
  double counted_weights = 0;             // weight elements in the budget
  bool latency = false;
  double unattributed_ms = 0;
};

// `latency`: the cost model latency's per-group times, or null for cost model weight.
Problem MakeProblem(const std::vector<AutoGroup>& groups,
                    const std::vector<std::vector<double>>& sensitivity,
                    const GroupLatencies* latency) {
  Problem p;
  p.latency = latency != nullptr;
  p.unattributed_ms = latency != nullptr ? latency->unattributed_ms : 0.0;
  for (size_t g = 0; g < groups.size(); ++g) {
    KnapsackItem item;
    std::vector<double> bits;
    for (size_t k = 0; k < groups[g].formats.size(); ++k) {
      const double weights = groups[g].cost_excluded ? 0.0 : groups[g].weight_elements;
      bits.push_back(weights * groups[g].bits[k]);
      const double cost = latency == nullptr        ? bits.back()
                          : groups[g].cost_excluded ? 0.0
                                                    : std::max(0.0, latency->ms[g][k]);
      item.options.push_back({cost, std::min(SqnrDbToNoise(sensitivity[g][k]), kMaxNoise)});
    }
    if (!groups[g].cost_excluded) p.counted_weights += groups[g].weight_elements;
    p.items.push_back(std::move(item));
    p.bits.push_back(std::move(bits));
  }
  return p;
}

std::vector<AutoFormat> Formats(const std::vector<AutoGroup>& groups, const KnapsackChoice& c) {
  std::vector<AutoFormat> out;
  for (size_t g = 0; g < groups.size(); ++g) out.push_back(groups[g].formats[c.option[g]]);
  return out;
}

double EffectiveBits(const Problem& p, const KnapsackChoice& c) {
  double bits = 0;
  for (size_t g = 0; g < c.option.size(); ++g) bits += p.bits[g][c.option[g]];
  return p.counted_weights > 0 ? bits / p.counted_weights : 0.0;
}

// A budget in the objective's unit as the search's cost.
double SearchBudget(const Problem& p, const AutoOptions& o) {
  if (o.effective_bits) return *o.effective_bits * p.counted_weights;
  return *o.latency_budget_ms - p.unattributed_ms;
}

// The choice's cost in the objective's unit: effective bits, or predicted ms.
double Describe(const Problem& p, const KnapsackChoice& c) {
  return p.latency ? c.cost + p.unattributed_ms : EffectiveBits(p, c);
}
const char* Unit(const Problem& p) { return p.latency ? "ms" : "bits"; }

std::string Why(const AutoGroup& group, const std::vector<double>& sqnr, const KnapsackItem& item,
                int chosen) {
  const auto db = [&](int k) {
    return std::isinf(sqnr[k]) && sqnr[k] > 0 ? std::string("exact")
                                              : fmt::format("{:.1f} dB", sqnr[k]);
  };
  if (group.pinned) return "pinned by the recipe";
  if (group.formats.size() == 1) return "the only candidate";
  if (group.cost_excluded) return "cost-excluded: outside the budget, most accurate candidate";
  if (group.weight_elements == 0) return "no weights, no cost: most accurate candidate";
  int cheapest = 0;
  for (size_t k = 1; k < item.options.size(); ++k) {
    if (item.options[k].cost < item.options[cheapest].cost) cheapest = static_cast<int>(k);
  }
  if (chosen == cheapest) return fmt::format("cheapest candidate (alone: {})", db(chosen));
  return fmt::format("kept above {}: alone {} vs {} in {}", AutoFormatName(group.formats[cheapest]),
                     db(cheapest), db(chosen), AutoFormatName(group.formats[chosen]));
}

}  // namespace

const char* AutoCostModelName(AutoCostModel model) {
  return model == AutoCostModel::kLatency ? "latency" : "weight";
}

StatusOr<AutoOptions> MakeAutoOptions(const AutoSettings& settings) {
  AutoOptions o;
  if (settings.candidate_formats) {
    o.candidate_formats.clear();
    for (const std::string& f : *settings.candidate_formats) {
      auto format = ParseAutoFormat(f);
      if (!format) return InvalidArgumentError("auto: unknown format '" + f + "'");
      o.candidate_formats.push_back(*format);
    }
  }
  o.score_size = settings.score_size.value_or(o.score_size);
  o.cost_excluded_layers = settings.cost_excluded_layers.value_or(std::vector<std::string>{});
  o.effective_bits = settings.effective_bits;
  o.min_sqnr_db = settings.min_sqnr_db;
  o.latency_budget_ms = settings.latency_budget_ms;
  if (settings.cost_model == "latency" || settings.latency_budget_ms) {
    o.cost_model = AutoCostModel::kLatency;
  } else if (settings.cost_model && *settings.cost_model != "weight") {
    return InvalidArgumentError("auto: cost model '" + *settings.cost_model +
                                "' is unknown; use weight or latency");
  }
  o.bf16_available = CpuHasBf16();
  return o;
}

namespace {

// The search, its measurements and its corrections for one objective.
class Search {
 public:
  Search(const std::vector<AutoGroup>& groups, const Problem& problem, const AutoMeter& meter,
         const AutoOptions& options, const ir::Graph& float_graph, const QuantPlan& plan,
         const runtime::NamedTensors& timing_inputs, AutoReport& report)
      : groups_(groups),
        problem_(problem),
        meter_(meter),
        options_(options),
        float_graph_(float_graph),
        plan_(plan),
        timing_inputs_(timing_inputs),
        report_(report) {}

  struct Measured {
    double db = 0;
    double ms = 0;  // cost model latency only
  };

  // Each distinct choice measured once: SQNR, and whole-model time in cost model latency.
  StatusOr<Measured> Measure(const KnapsackChoice& c) {
    auto it = measured_.find(c.option);
    if (it != measured_.end()) return it->second;
    Measured m;
    ASSIGN_OR_RETURN(m.db, meter_.SqnrDb(Formats(groups_, c)));
    if (problem_.latency) {
      AppliedFormats applied = ApplyFormats(float_graph_, plan_, groups_, Formats(groups_, c));
      ASSIGN_OR_RETURN(auto graph, ExportApplied(float_graph_, applied));
      ASSIGN_OR_RETURN(m.ms, ModelLatencyMs(*graph, timing_inputs_, options_.latency));
    }
    measured_[c.option] = m;
    return m;
  }

  Status RunFrontier() {
    frontier_ = Frontier(problem_.items, options_.frontier_points);
    for (const KnapsackChoice& c : frontier_) {
      ASSIGN_OR_RETURN(Measured m, Measure(c));
      report_.frontier.push_back({EffectiveBits(problem_, c),
                                  problem_.latency ? Describe(problem_, c) : 0.0, m.ms,
                                  NoiseToSqnrDb(c.noise), m.db, Formats(groups_, c)});
      report_.exact = report_.exact && c.exact;
    }
    return Status::Ok();
  }

  // --effective-bits or --latency-budget.
  StatusOr<KnapsackChoice> Budgeted() {
    const double limit =
        options_.effective_bits ? *options_.effective_bits : *options_.latency_budget_ms;
    double budget = SearchBudget(problem_, options_);
    KnapsackChoice choice = SolveBudget(problem_.items, budget);
    ASSIGN_OR_RETURN(Measured m, Measure(choice));
    if (!choice.feasible) {
      report_.corrections.push_back(
          fmt::format("nothing fits {:.2f} {} (the cheapest choice is {:.2f}): took the cheapest",
                      limit, Unit(problem_), Describe(problem_, SolveBudget(problem_.items, 0))));
    }
    // Latency: the whole model is what must fit; shrink the search's budget by the overshoot.
    for (int round = 0; problem_.latency && m.ms > limit && round < kMaxCorrections; ++round) {
      budget -= m.ms - limit;
      KnapsackChoice again = SolveBudget(problem_.items, budget);
      if (!again.feasible || again.option == choice.option) break;
      ASSIGN_OR_RETURN(Measured next, Measure(again));
      report_.corrections.push_back(fmt::format(
          "predicted {:.2f} ms, measured {:.2f} ms (> {:.2f}): searched again with {:.2f} ms "
          "-> measured {:.2f} ms, {:.1f} dB",
          Describe(problem_, choice), m.ms, limit, budget + problem_.unattributed_ms, next.ms,
          next.db));
      choice = again;
      m = next;
    }
    auto fits = [&](const KnapsackChoice& c, const Measured& cm) {
      return problem_.latency ? cm.ms <= limit : c.cost <= SearchBudget(problem_, options_);
    };
    report_.reached = fits(choice, m);
    for (const KnapsackChoice& alt : frontier_) {
      const Measured am = measured_[alt.option];
      if (fits(alt, am) && (am.db > m.db + 0.05 || !report_.reached)) {
        report_.corrections.push_back(fmt::format(
            "the search's choice ({:.2f} {}) predicted {:.1f} dB and measured {:.1f} dB; the "
            "frontier choice at {:.2f} {} measured {:.1f} dB and fits: taken",
            Describe(problem_, choice), Unit(problem_), NoiseToSqnrDb(choice.noise), m.db,
            Describe(problem_, alt), Unit(problem_), am.db));
        choice = alt;
        m = am;
        report_.reached = true;
      }
    }
    return choice;
  }

  // --min-sqnr.
  StatusOr<KnapsackChoice> ReachSqnr() {
    const double target = *options_.min_sqnr_db;
    double allowed = SqnrDbToNoise(target);
    KnapsackChoice choice = SolveMaxNoise(problem_.items, allowed);
    ASSIGN_OR_RETURN(Measured m, Measure(choice));
    for (int round = 0; round < kMaxCorrections && m.db < target && choice.feasible; ++round) {
      // Errors added up worse than predicted: ask the prediction for that much more margin.
      const double ratio = SqnrDbToNoise(m.db) / std::max(choice.noise, 1e-300);
      const double next = std::min(allowed / std::max(ratio, 1.0), allowed * 0.5);
      KnapsackChoice again = SolveMaxNoise(problem_.items, next);
      if (!again.feasible || again.option == choice.option) break;
      ASSIGN_OR_RETURN(Measured again_m, Measure(again));
      report_.corrections.push_back(fmt::format(
          "predicted {:.1f} dB at {:.2f} {}, measured {:.1f} dB (< {:.1f}): searched again "
          "for predicted {:.1f} dB -> {:.2f} {}, measured {:.1f} dB",
          NoiseToSqnrDb(choice.noise), Describe(problem_, choice), Unit(problem_), m.db, target,
          NoiseToSqnrDb(next), Describe(problem_, again), Unit(problem_), again_m.db));
      allowed = next;
      choice = again;
      m = again_m;
    }
    if (m.db < target) {
      // The cheapest measured choice that reaches the target, else the best measured one.
      const KnapsackChoice* pick = nullptr;
      for (const KnapsackChoice& c : frontier_) {
        if (measured_[c.option].db >= target && (pick == nullptr || c.cost < pick->cost)) {
          pick = &c;
        }
      }
      if (pick == nullptr) {
        for (const KnapsackChoice& c : frontier_) {
          if (pick == nullptr || measured_[c.option].db > measured_[pick->option].db) pick = &c;
        }
      }
      if (pick != nullptr && measured_[pick->option].db > m.db) {
        report_.corrections.push_back(
            fmt::format("took the measured frontier choice at {:.2f} {} ({:.1f} dB)",
                        Describe(problem_, *pick), Unit(problem_), measured_[pick->option].db));
        choice = *pick;
        m = measured_[pick->option];
      }
    }
    report_.reached = m.db >= target;
    return choice;
  }

  const Measured& MeasuredOf(const KnapsackChoice& c) { return measured_[c.option]; }

 private:
  const std::vector<AutoGroup>& groups_;
  const Problem& problem_;
  const AutoMeter& meter_;
  const AutoOptions& options_;
  const ir::Graph& float_graph_;
  const QuantPlan& plan_;
  const runtime::NamedTensors& timing_inputs_;
  AutoReport& report_;
  std::vector<KnapsackChoice> frontier_;
  std::map<std::vector<int>, Measured> measured_;
};

// One batch of the model's inputs, for timing: the model's fixed batch size, else 1.
StatusOr<runtime::NamedTensors> TimingInputs(const ir::Graph& graph, CalibrationSource& source) {
  const int64_t batch = std::min(FixedBatchSize(graph).value_or(1), source.num_samples());
  ASSIGN_OR_RETURN(auto tensors, source.Batch(0, std::max<int64_t>(batch, 1)));
  runtime::NamedTensors inputs;
  for (auto& [name, tensor] : tensors) inputs.emplace_back(name, tensor.Clone());
  return inputs;
}

}  // namespace

StatusOr<AutoReport> RunAutoSearch(const ir::Graph& float_graph, QuantPlan& plan,
                                   const Recipe& recipe, const InputSizes& sizes,
                                   CalibrationSource& source, const AutoOptions& options) {
  const int objectives = options.effective_bits.has_value() + options.min_sqnr_db.has_value() +
                         options.latency_budget_ms.has_value();
  if (objectives != 1) {
    return InvalidArgumentError(
        "auto: give exactly one objective (effective bits, min SQNR or latency budget)");
  }
  if (options.candidate_formats.empty() || options.score_size < 1 || options.frontier_points < 2 ||
      options.threads < 1 || options.latency.threads < 1) {
    return InvalidArgumentError(
        "auto: needs candidate formats, score_size >= 1, frontier_points >= 2, threads >= 1");
  }
  const bool latency =
      options.cost_model == AutoCostModel::kLatency || options.latency_budget_ms.has_value();
  if (latency && options.effective_bits) {
    return InvalidArgumentError(
        "auto: --effective-bits counts weight bits; it does not go "
        "with cost model latency");
  }
  AutoReport report;
  report.objective = options.effective_bits ? "effective_bits"
                     : options.min_sqnr_db  ? "min_sqnr_db"
                                            : "latency_budget_ms";
  report.target = options.effective_bits ? *options.effective_bits
                  : options.min_sqnr_db  ? *options.min_sqnr_db
                                         : *options.latency_budget_ms;
  report.cost_model = latency ? "latency" : "weight";
  const auto requested = [&](AutoFormat f) {
    return std::count(options.candidate_formats.begin(), options.candidate_formats.end(), f) > 0;
  };
  if (requested(AutoFormat::kBf16) && !options.bf16_available) {
    report.notes.push_back(
        "bf16 dropped from the candidates: this CPU has neither avx512_bf16 nor amx_bf16");
  }
  if (requested(AutoFormat::kBf16) && options.bf16_available) {
    report.notes.push_back(
        "bf16 layers: qtune's engine computes them in bfloat16 (model metadata "
        "'qtune.bf16_nodes'); other runtimes run them in fp32");
  }
  if (requested(AutoFormat::kFp8)) {
    report.notes.push_back(latency ? "fp8 is a TensorRT format, emulated in qtune's engine: its "
                                     "time here means nothing, so it is costed as int8"
                                   : "fp8 is a TensorRT format, emulated in qtune's engine: "
                                     "scored by accuracy; its speed here means nothing");
  }

  AutoGroupOptions group_options{options.candidate_formats, options.cost_excluded_layers,
                                 options.bf16_available};
  ASSIGN_OR_RETURN(std::vector<AutoGroup> groups,
                   BuildAutoGroups(float_graph, plan, recipe, sizes, group_options));
  ASSIGN_OR_RETURN(auto meter, AutoMeter::Create(float_graph, plan, groups, source,
                                                 options.score_size, options.threads));
  report.samples = meter->samples();
  report.measured = meter->measured();

  std::unique_ptr<ProgressBar> progress;
  if (options.show_progress) {
    progress = std::make_unique<ProgressBar>("auto: layer sensitivity",
                                             static_cast<int64_t>(groups.size()));
  }
  ASSIGN_OR_RETURN(auto sensitivity, meter->Sensitivity([&] {
    if (progress) progress->Advance();
  }));
  if (progress) progress->Finish();
  runtime::NamedTensors timing_inputs;
  std::optional<GroupLatencies> latencies;
  if (latency) {
    ASSIGN_OR_RETURN(timing_inputs, TimingInputs(float_graph, source));
    ASSIGN_OR_RETURN(latencies, ProfileGroupLatencies(float_graph, plan, groups, timing_inputs,
                                                      options.latency));
    report.unattributed_ms = latencies->unattributed_ms;
  }
  const Problem problem = MakeProblem(groups, sensitivity, latencies ? &*latencies : nullptr);

  Search search(groups, problem, *meter, options, float_graph, plan, timing_inputs, report);
  RETURN_IF_ERROR(search.RunFrontier());
  ASSIGN_OR_RETURN(KnapsackChoice choice,
                   options.min_sqnr_db ? search.ReachSqnr() : search.Budgeted());
  report.exact = report.exact && choice.exact;
  report.effective_bits = EffectiveBits(problem, choice);
  report.predicted_db = NoiseToSqnrDb(choice.noise);
  report.measured_db = search.MeasuredOf(choice).db;
  report.measured_ms = search.MeasuredOf(choice).ms;
  for (const std::string& c : report.corrections) QTUNE_LOG_INFO("auto: {}", c);

  const std::vector<AutoFormat> formats = Formats(groups, choice);
  for (size_t g = 0; g < groups.size(); ++g) {
    AutoGroupResult r;
    r.nodes = groups[g].nodes;
    r.weight_elements = groups[g].weight_elements;
    r.cost_excluded = groups[g].cost_excluded;
    r.pinned = groups[g].pinned;
    r.formats = groups[g].formats;
    r.bits = groups[g].bits;
    r.sensitivity_db = sensitivity[g];
    if (latencies) r.latency_ms = latencies->ms[g];
    r.chosen = formats[g];
    r.why = Why(groups[g], sensitivity[g], problem.items[g], choice.option[g]);
    r.notes = groups[g].notes;
    report.groups.push_back(std::move(r));
  }
  AppliedFormats applied = ApplyFormats(float_graph, plan, groups, formats);
  plan = std::move(applied.plan);
  report.bf16_nodes = std::move(applied.bf16_nodes);
  return report;
}

}  // namespace qtune::quant
