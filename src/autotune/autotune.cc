#include "autotune/autotune.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "autotune/calib_digest.h"
#include "autotune/import_qdq.h"
#include "autotune/measurer.h"
#include "autotune/pattern.h"
#include "autotune/pattern_cache.h"
#include "autotune/placement_export.h"
#include "autotune/region.h"
#include "autotune/report.h"
#include "autotune/search.h"
#include "core/file_io.h"
#include "core/json_limits.h"
#include "core/logging.h"
#include "core/sha256.h"
#include "ir/onnx_io.h"
#include "measure/benchmark_command.h"
#include "measure/benchmark_inprocess.h"
#include "measure/benchmark_redis.h"
#include "measure/state_log.h"
#include "quant/calibrate.h"
#include "quant/calibration_data.h"
#include "quant/output_sqnr.h"
#include "quant/plan_json.h"
#include "quant/quantize_model.h"
#include "runtime/shape/infer_shapes.h"

namespace qtune::autotune {
namespace fs = std::filesystem;
namespace {

using InputSizes = std::map<std::string, std::vector<int64_t>>;

// What a measurement depends on besides the flags: found while the run starts.
struct RunInputs {
  std::string import_sha;       // of --import-qdq; empty without
  std::string recipe_sha;       // of the recipe file; empty for a preset name
  nlohmann::json calib_sha256;  // CalibrationDigests() of --calib
  InputSizes input_sizes;       // the sizes measured
  std::string machine;          // the measuring machine's fingerprint
};

// Every option and input that changes a measurement or the search's path: the state log's
// header (docs/formats/autotune-state.md). --timeout, --retries and --parallel do not.
nlohmann::json ResultOptions(const AutotuneOptions& o, const ModePreset& preset,
                             const RunInputs& in) {
  return {{"recipe", o.recipe},
          {"recipe_sha256", in.recipe_sha},
          {"calib_sha256", in.calib_sha256},
          {"input_sizes", in.input_sizes},
          {"machine", in.machine},
          {"calib", o.calib_specs},
          {"preprocess", o.preprocess},
          {"max_calib_samples", o.max_calib_samples},
          {"mode", o.mode},
          {"start", o.start},
          {"schemes_per_pattern", preset.schemes_per_pattern},
          {"rounds", preset.rounds},
          {"iters", preset.iters},
          {"warmup", preset.warmup},
          {"threads", o.threads},
          {"min_sqnr_db", o.min_sqnr_db},
          {"seed", o.seed},
          {"benchmark", o.benchmark},
          {"benchmark_command", o.benchmark_command},
          {"latency_regex", o.latency_regex},
          {"shape_aware", o.shape_aware},
          {"import_qdq_sha256", in.import_sha}};
}

measure::RedisBenchmarkOptions RedisOptions(const AutotuneOptions& o, const ModePreset& preset,
                                            const InputSizes& sizes) {
  measure::RedisBenchmarkOptions b;
  b.url = o.redis_url;
  b.queue = o.queue;
  b.warmup = preset.warmup;
  b.iters = preset.iters;
  b.input_sizes = sizes;
  b.seed = o.seed;
  b.timeout_s = o.timeout_s;
  b.worker_wait_s = o.worker_wait_s;
  b.allow_mixed_workers = o.allow_mixed_workers;
  return b;
}

// --benchmark redis: Redis and a worker must be there before calibration starts, so a
// missing one is an error within seconds (the benchmark checks again when created).
Status PrecheckBenchmark(const AutotuneOptions& o) {
  if (o.benchmark == "command" && !o.benchmark_command.empty()) {  // the template splits
    measure::CommandBenchmarkOptions b;
    b.command_template = o.benchmark_command;
    b.latency_regex = o.latency_regex;
    ASSIGN_OR_RETURN(auto bench, measure::CommandBenchmark::Create(b));
  }
  if (o.benchmark != "redis") {
    if (!o.redis_url.empty()) return InvalidArgumentError("--redis needs --benchmark redis");
    return Status::Ok();
  }
  if (o.redis_url.empty()) {
    return InvalidArgumentError("--benchmark redis needs --redis redis://HOST:PORT/DB");
  }
  if (!o.benchmark_command.empty()) {
    return InvalidArgumentError(
        "--benchmark-command is for --benchmark command; give it to the workers instead "
        "(qtune worker --benchmark-command ...)");
  }
  ASSIGN_OR_RETURN(auto bench, measure::RedisBenchmark::Create(RedisOptions(o, ModePreset{}, {})));
  return Status::Ok();
}

StatusOr<std::unique_ptr<measure::Benchmark>> MakeBenchmark(const AutotuneOptions& o,
                                                            const ModePreset& preset,
                                                            const InputSizes& sizes) {
  if (o.benchmark == "inprocess") {
    if (!o.benchmark_command.empty()) {
      return InvalidArgumentError("--benchmark-command needs --benchmark command");
    }
    measure::InProcessBenchmarkOptions b;
    b.worker_executable = o.worker_executable;
    b.threads = o.threads;
    b.warmup = preset.warmup;
    b.iters = preset.iters;
    b.input_sizes = sizes;
    b.timeout_s = o.timeout_s;
    b.seed = o.seed;
    ASSIGN_OR_RETURN(auto bench, measure::InProcessBenchmark::Create(b));
    return std::unique_ptr<measure::Benchmark>(std::move(bench));
  }
  if (o.benchmark == "command") {
    if (o.benchmark_command.empty()) {
      return InvalidArgumentError(
          "--benchmark command needs --benchmark-command 'TOOL ... {model} ...'");
    }
    measure::CommandBenchmarkOptions b;
    b.command_template = o.benchmark_command;
    if (!o.latency_regex.empty()) b.latency_regex = o.latency_regex;
    b.timeout_s = o.timeout_s;
    b.log_dir = (fs::path(o.work_dir) / "logs").string();
    ASSIGN_OR_RETURN(auto bench, measure::CommandBenchmark::Create(b));
    return std::unique_ptr<measure::Benchmark>(std::move(bench));
  }
  if (o.benchmark == "redis") {
    ASSIGN_OR_RETURN(auto bench, measure::RedisBenchmark::Create(RedisOptions(o, preset, sizes)));
    return std::unique_ptr<measure::Benchmark>(std::move(bench));
  }
  return InvalidArgumentError("--benchmark must be inprocess, command or redis, not '" +
                              o.benchmark + "'");
}

// Sizes of one sample (batch 1, or the model's fixed batch) for measuring.
StatusOr<InputSizes> MeasureSizes(const ir::Graph& graph, quant::CalibrationSource& source) {
  ASSIGN_OR_RETURN(auto batch, source.Batch(0, quant::FixedBatchSize(graph).value_or(1)));
  InputSizes sizes;
  for (const auto& [name, tensor] : batch) sizes[name] = tensor.sizes();
  return sizes;
}

// Calibrates the candidate tensors the rule-based plan has no range for.
Status CalibrateCandidates(const ir::Graph& graph, const std::set<std::string>& tensors,
                           const quant::QuantizerConfig& config, quant::CalibrationSource& source,
                           const AutotuneOptions& o,
                           std::map<std::string, quant::TensorRange>& ranges) {
  std::map<std::string, quant::CalibrationRequest> requests;
  for (const std::string& t : tensors) {
    if (!ranges.count(t))
      requests.emplace(t, quant::CalibrationRequest{config.calibrator, config.format});
  }
  if (requests.empty()) return Status::Ok();
  quant::CalibrateOptions calibrate;
  calibrate.max_samples = o.max_calib_samples;
  calibrate.threads = o.threads;
  calibrate.show_progress = o.show_progress;
  ASSIGN_OR_RETURN(auto extra, quant::CalibrateActivations(graph, requests, source, calibrate));
  ranges.insert(extra.begin(), extra.end());
  return Status::Ok();
}

// The config of activations the rules did not quantize: that of the rules' activations.
quant::QuantizerConfig FirstActivationConfig(const quant::QuantPlan& plan) {
  for (const quant::QuantSite& site : plan.sites) {
    if (site.kind == quant::QuantSite::Kind::kActivation) return site.config;
  }
  return quant::QuantizerConfig{};
}

}  // namespace

StatusOr<ModePreset> PresetOfMode(const std::string& mode) {
  if (mode == "quick") return ModePreset{4, 2, 5, 2};
  if (mode == "default") return ModePreset{8, 3, 10, 3};
  if (mode == "extensive") return ModePreset{24, 5, 20, 5};
  return InvalidArgumentError("--mode must be quick, default or extensive, not '" + mode + "'");
}

StatusOr<nlohmann::json> RunAutotune(const AutotuneOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  if (o.work_dir.empty()) return InvalidArgumentError("--work-dir is required");
  ASSIGN_OR_RETURN(ModePreset preset, PresetOfMode(o.mode));
  if (o.schemes_per_pattern > 0) preset.schemes_per_pattern = o.schemes_per_pattern;
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  if (ec)
    return InvalidArgumentError("cannot create --work-dir " + o.work_dir + ": " + ec.message());
  RETURN_IF_ERROR(PrecheckBenchmark(o));

  // 1. The rule-based plan, calibrated (the `qtune quantize` flow without export). The
  // data is identified by content before it is read.
  ASSIGN_OR_RETURN(std::string model_sha, Sha256File(o.model_path));
  RunInputs in;
  ASSIGN_OR_RETURN(in.calib_sha256, CalibrationDigests(o.calib_specs));
  ASSIGN_OR_RETURN(auto model, ir::LoadModel(o.model_path));
  quant::QuantizeModelOptions q;
  q.recipe = o.recipe;
  q.calib_specs = o.calib_specs;
  q.preprocess = o.preprocess;
  q.max_calib_samples = o.max_calib_samples;
  q.threads = o.threads;
  q.show_progress = o.show_progress;
  q.export_model = false;
  ASSIGN_OR_RETURN(quant::QuantizeModelResult rule, quant::QuantizeModel(*model, q));
  const ir::Graph& float_graph = *rule.float_graph;

  ASSIGN_OR_RETURN(auto source,
                   quant::OpenCalibrationData(o.calib_specs, o.preprocess, float_graph));
  ASSIGN_OR_RETURN(InputSizes sizes, MeasureSizes(float_graph, *source));
  ASSIGN_OR_RETURN(auto partial, runtime::InferShapesPartially(float_graph, sizes, {}));
  const runtime::ValueInfoMap& infos = partial.infos;  // staged sizes: those values stay float

  // 2. Regions, and ranges for every candidate tensor. The regions are found on a copy
  // whose value types carry the inferred sizes (the validity rules read dtypes and sizes);
  // points resolve to names, which the float graph shares.
  std::unique_ptr<ir::Graph> typed_graph = float_graph.Clone();
  for (const auto& [value, info] : infos) {
    if (value->is_initializer() || info.dtype == DataType::kUndefined) continue;
    ir::Value* typed = typed_graph->FindValue(value->name());
    if (typed != nullptr) typed->set_type({info.dtype, Shape::FromSizes(info.sizes)});
  }
  ASSIGN_OR_RETURN(RegionTree tree, PartitionRegions(*typed_graph, RegionOptions{}));
  ExporterInputs exporter_inputs;
  exporter_inputs.float_graph = &float_graph;
  exporter_inputs.rule_plan = rule.plan;
  exporter_inputs.infos = infos;
  exporter_inputs.target = rule.plan.target;
  for (const quant::QuantSite& site : rule.plan.sites) {
    if (site.kind != quant::QuantSite::Kind::kActivation) continue;
    if (site.range.has_value()) exporter_inputs.ranges[site.value] = *site.range;
  }
  exporter_inputs.activation_config = FirstActivationConfig(rule.plan);
  std::set<std::string> candidate_tensors;
  for (int id = 0; id < tree.num_leaves; ++id) {
    for (const InsertionPoint& p : CandidatePoints(tree, id)) {
      candidate_tensors.insert(Resolve(tree, id, p).tensor);
    }
  }
  RETURN_IF_ERROR(CalibrateCandidates(float_graph, candidate_tensors,
                                      exporter_inputs.activation_config, *source, o,
                                      exporter_inputs.ranges));
  PlacementExporter exporter(std::move(exporter_inputs));
  std::vector<PatternInfo> patterns =
      GroupPatterns(tree, SignatureOptions{o.shape_aware}, exporter);

  // 3. Seeds from the pattern cache and --import-qdq.
  SearchOptions search;
  if (!o.pattern_cache.empty()) {
    ASSIGN_OR_RETURN(search.seeds, LoadPatternCache(o.pattern_cache));
  }
  if (!o.import_qdq.empty()) {
    ASSIGN_OR_RETURN(in.import_sha, Sha256File(o.import_qdq));
    ASSIGN_OR_RETURN(PatternSeeds imported, ImportQdqSeeds(o.import_qdq, patterns));
    for (auto& [sig, schemes] : imported) {
      auto& list = search.seeds[sig];
      list.insert(list.begin(), schemes.begin(), schemes.end());
    }
  }

  // 4. The measuring back end, and the state log: its header holds everything a
  // measurement depends on, so a log of other data, sizes or machine is never replayed.
  ASSIGN_OR_RETURN(auto benchmark, MakeBenchmark(o, preset, sizes));
  if (std::error_code file_ec; fs::is_regular_file(o.recipe, file_ec)) {
    ASSIGN_OR_RETURN(in.recipe_sha, Sha256File(o.recipe));
  }
  in.input_sizes = sizes;
  in.machine = measure::MeasuringMachine(*benchmark, o.threads);
  measure::StateHeader header;
  header.qtune_version = "0.1.0";
  header.model_sha256 = model_sha;
  header.options = ResultOptions(o, preset, in);
  ASSIGN_OR_RETURN(std::unique_ptr<measure::StateLog> log,
                   measure::StateLog::OpenInWorkDir(o.work_dir, header, o.force_new));
  if (!log->replayed().empty()) {
    QTUNE_LOG_INFO("autotune: warm restart: {} measurements in {}", log->replayed().size(),
                   log->path());
  }
  if (o.parallel < 1) return InvalidArgumentError("--parallel must be at least 1");
  // Two measurements at once on one machine would disturb each other: only workers (one
  // measurement each) measure in parallel.
  const int parallel = o.benchmark == "redis" ? o.parallel : 1;
  if (o.parallel > 1 && parallel == 1) {
    QTUNE_LOG_WARNING(
        "autotune: --parallel {} applies to --benchmark redis; the {} back end "
        "measures one candidate at a time",
        o.parallel, o.benchmark);
  }
  Measurer measurer(*benchmark, *log, MeasurerOptions{preset.rounds, o.retries, 100, parallel});

  // 5. Baselines: the rule-based placement against fp32.
  const Placement fp32_placement;
  const Placement rule_placement = PlacementOfPlan(exporter.PlanFor(PlacementOfPlan(rule.plan)));
  const fs::path models = fs::path(o.work_dir) / "models";
  fs::create_directories(models, ec);
  auto write_model = [&](const Placement& p, const std::string& path) -> Status {
    ASSIGN_OR_RETURN(auto graph, exporter.Export(p));
    ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(*graph));
    return WriteFileAtomic(path, bytes);
  };
  const std::string fp32_path = (models / "fp32.onnx").string();
  const std::string rule_path = (models / "rule.onnx").string();
  RETURN_IF_ERROR(write_model(fp32_placement, fp32_path));
  RETURN_IF_ERROR(write_model(rule_placement, rule_path));
  auto baseline_files = [&]() -> StatusOr<std::pair<std::string, std::string>> {
    return std::make_pair(rule_path, fp32_path);
  };
  const measure::MeasurementKey baseline_key{.step = measure::MeasurementKey::Step::kBaseline,
                                             .candidate = PlacementHash(rule_placement),
                                             .reference = PlacementHash(fp32_placement)};
  if (o.start != "auto" && o.start != "rule" && o.start != "fp32") {
    return InvalidArgumentError("--start must be auto, rule or fp32, not '" + o.start + "'");
  }

  // --min-sqnr: candidates (and the rule-based start) must keep the outputs at the target.
  std::unique_ptr<quant::OutputComparer> comparer;
  double rule_sqnr_db = 0;
  bool rule_meets_accuracy = true;
  if (o.min_sqnr_db > 0) {
    ASSIGN_OR_RETURN(
        comparer, quant::OutputComparer::Create(float_graph, *source, o.sqnr_samples, o.threads));
    search.sqnr = [&](const ir::Graph& graph) -> StatusOr<double> {
      ASSIGN_OR_RETURN(quant::OutputSqnr sqnr, comparer->Compare(graph));
      return sqnr.db;
    };
    search.min_sqnr_db = o.min_sqnr_db;
    ASSIGN_OR_RETURN(auto rule_graph, exporter.Export(rule_placement));
    ASSIGN_OR_RETURN(rule_sqnr_db, search.sqnr(*rule_graph));
    if (!(rule_sqnr_db >= o.min_sqnr_db)) {
      QTUNE_LOG_WARNING(
          "autotune: the rule-based placement's outputs are at {:.1f} dB, below --min-sqnr {:.1f}: "
          "the search starts from fp32",
          rule_sqnr_db, o.min_sqnr_db);
      rule_meets_accuracy = false;
    }
  }

  // With measurements in parallel, the baseline is measured with the search's first
  // generation (SearchOptions::first_batch: alone it would keep K - 1 workers idle), which
  // starts from the placement --start names; with --start auto, from the rule-based one
  // (int8 is faster almost everywhere): when the baseline finds fp32 faster, the search
  // starts again from fp32. One at a time, nothing is gained: the baseline goes first.
  Comparison baseline;
  bool rule_is_faster = false;
  bool start_from_rule = false;
  const auto decide_start = [&](const std::vector<Comparison>& measured) -> StatusOr<Placement> {
    baseline = measured.at(0);
    if (!baseline.ok) {
      return FailedPreconditionError(
          "autotune: the baseline models could not be measured (" + baseline.error +
          "); check the benchmark with `qtune bench " + rule_path +
          "` or the --benchmark-command; run again to retry (measurements are kept in " +
          log->path() + ")");
    }
    rule_is_faster = baseline.ratio < 1.0;
    start_from_rule =
        rule_meets_accuracy && (o.start == "auto" ? rule_is_faster : o.start == "rule");
    return start_from_rule ? rule_placement : fp32_placement;
  };
  const double setup_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  Placement guessed_start =
      rule_meets_accuracy && o.start != "fp32" ? rule_placement : fp32_placement;
  if (parallel > 1) {
    search.first_batch = {{baseline_key, "baseline", "", baseline_files}};
    search.first_batch_done = decide_start;
  } else {
    ASSIGN_OR_RETURN(Comparison measured,
                     measurer.Compare(baseline_key, "baseline", "", baseline_files));
    ASSIGN_OR_RETURN(guessed_start, decide_start({measured}));
  }

  // 6. The search.
  search.schemes_per_pattern = preset.schemes_per_pattern;
  search.seed = o.seed;
  search.work_dir = o.work_dir;
  const std::string best_path = (fs::path(o.work_dir) / "best.onnx").string();
  search.on_new_best = [&](const ir::Graph& graph) -> Status {
    ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(graph));
    return WriteFileAtomic(best_path, bytes);
  };
  Searcher searcher(exporter, measurer, patterns, search);
  ASSIGN_OR_RETURN(SearchResult result, searcher.Run(guessed_start));

  // 7. The guard: the tuned placement must not be slower than the faster baseline (that
  // meets --min-sqnr). Wins were adopted one at a time against the incumbent of the
  // moment; measured as a whole against the start, twice, it must win by more than the
  // noise, else the start placement is kept (a performance guard, as ModelOpt's #2318 added).
  const bool guard_against_rule = rule_is_faster && rule_meets_accuracy;
  const Placement& start = guard_against_rule ? rule_placement : fp32_placement;
  const std::string start_path = guard_against_rule ? rule_path : fp32_path;
  bool guard_reverted = false;
  const std::string fp32_hash = PlacementHash(fp32_placement);
  const std::string rule_hash = PlacementHash(rule_placement);
  auto files = [](std::string candidate, std::string reference) {
    return [candidate = std::move(candidate),
            reference = std::move(reference)]() -> StatusOr<std::pair<std::string, std::string>> {
      return std::make_pair(candidate, reference);
    };
  };
  // The final model measured against both baselines (the requests; best.onnx written).
  auto finals_of = [&](const Placement& best) -> StatusOr<std::vector<Measurer::Request>> {
    RETURN_IF_ERROR(write_model(best, best_path));
    const std::string best_hash = PlacementHash(best);
    const auto final_key = [&](const std::string& reference) {
      return measure::MeasurementKey{.step = measure::MeasurementKey::Step::kFinal,
                                     .candidate = best_hash,
                                     .reference = reference};
    };
    return std::vector<Measurer::Request>{
        {final_key(fp32_hash), "final", "", files(best_path, fp32_path)},
        {final_key(rule_hash), "final", "", files(best_path, rule_path)}};
  };
  ASSIGN_OR_RETURN(std::vector<Measurer::Request> finals, finals_of(result.best));
  std::vector<Comparison> final_results;
  if (result.best != start) {
    // The guard's two measurements and the finals of the tuned placement, all at once
    // (with --parallel); when the guard reverts, the finals are measured again for the start.
    const measure::MeasurementKey guard_key{.step = measure::MeasurementKey::Step::kGuard,
                                            .candidate = PlacementHash(result.best),
                                            .reference = PlacementHash(start)};
    std::vector<Measurer::Request> batch = {
        {guard_key, "guard", "", files(best_path, start_path)},
        {guard_key.Repeated(), "guard", "", files(best_path, start_path)}};
    batch.insert(batch.end(), finals.begin(), finals.end());
    ASSIGN_OR_RETURN(std::vector<Comparison> measured, measurer.CompareMany(batch));
    const Comparison& first = measured[0];
    const Comparison& second = measured[1];
    final_results.assign(measured.begin() + 2, measured.end());
    // A tie within the noise goes to the start: the tuned placement must be faster.
    const Comparison both = CombineComparisons(first, second);
    if (!first.ok || !second.ok || both.ratio >= 1.0 - both.noise) {
      QTUNE_LOG_WARNING(
          "autotune: the tuned placement did not hold up against the {} baseline as a whole; "
          "keeping the {} baseline's placement",
          guard_against_rule ? "rule-based" : "fp32", guard_against_rule ? "rule-based" : "fp32");
      result.best = start;
      guard_reverted = true;
      final_results.clear();
      for (PatternReport& report : result.patterns) {
        for (const PatternInfo& p : patterns) {
          if (p.id == report.id) report.best_scheme = ProjectScheme(p, 0, result.best);
        }
      }
      ASSIGN_OR_RETURN(finals, finals_of(result.best));
    }
  }
  if (final_results.empty()) {
    ASSIGN_OR_RETURN(final_results, measurer.CompareMany(finals));
  }

  // 8. The final model (and its plan, for `qtune tune --autotune-dir`).
  RETURN_IF_ERROR(WriteFileAtomic((fs::path(o.work_dir) / "plan.json").string(),
                                  quant::PlanToJsonText(exporter.PlanFor(result.best))));
  RETURN_IF_ERROR(write_model(result.best, o.output_path));
  const Comparison& vs_fp32 = final_results[0];
  const Comparison& vs_rule = final_results[1];
  if (!o.pattern_cache.empty()) {
    RETURN_IF_ERROR(SavePatternCache(o.pattern_cache, search.seeds, result));
  }

  ReportInputs report;
  report.options = &o;
  report.model_sha256 = model_sha;
  report.benchmark = benchmark->Describe();
  report.baseline = baseline;
  report.start_from_rule = start_from_rule;
  report.rule_points = static_cast<int>(rule_placement.size());
  report.rule_sqnr_db = rule_sqnr_db;
  report.leaf_regions = tree.num_leaves;
  report.search = &result;
  report.vs_fp32 = vs_fp32;
  report.vs_rule = vs_rule;
  report.guard_reverted = guard_reverted;
  report.counters = measurer.counters();
  report.timing = measurer.timing();
  report.setup_s = setup_s;
  report.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  nlohmann::json json = BuildReport(report);
  RETURN_IF_ERROR(
      WriteFileAtomic((fs::path(o.work_dir) / "report.json").string(), DumpJson(json, 2) + "\n"));
  return json;
}

}  // namespace qtune::autotune
