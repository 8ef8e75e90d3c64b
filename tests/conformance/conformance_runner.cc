#include "conformance/conformance_runner.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "conformance/node_test_case.h"
#include "core/run_value.h"
#include "ir/onnx_io.h"
#include "runtime/reference/registry.h"
#include "runtime/session.h"

namespace qtune::conformance {
namespace {

Outcome FromStatus(const Status& status, const std::string& stage) {
  Verdict verdict =
      status.code() == StatusCode::kUnimplemented ? Verdict::kUnsupported : Verdict::kFail;
  return {verdict, stage + ": " + status.ToString()};
}

// Empty when `actual` matches `expected`: the same kind, sequence length and element
// type, and every tensor within `tolerance`.
std::string CompareValues(const RunValue& actual, const RunValue& expected,
                          const Tolerance& tolerance) {
  if (actual.kind() != expected.kind()) return "the kinds (tensor, sequence, none) differ";
  if (expected.is_none()) return "";
  if (expected.is_tensor()) return CompareTensors(actual.tensor(), expected.tensor(), tolerance);
  if (actual.sequence().size() != expected.sequence().size()) {
    return "sequence length " + std::to_string(actual.sequence().size()) + ", expected " +
           std::to_string(expected.sequence().size());
  }
  if (actual.elem_dtype() != expected.elem_dtype()) return "the element types differ";
  for (size_t i = 0; i < expected.sequence().size(); ++i) {
    std::string diff = CompareTensors(actual.sequence()[i], expected.sequence()[i], tolerance);
    if (!diff.empty()) return "element " + std::to_string(i) + ": " + diff;
  }
  return "";
}

// A model with sequence or optional inputs or outputs: through Session::RunValues.
Outcome RunValueModel(const ir::Graph& graph, const NodeTestData& data, runtime::Session& session,
                      const std::string& mode, const Tolerance& tolerance) {
  std::map<std::string, RunValue> given;
  for (const auto& [name, tensor] : data.inputs) given[name] = RunValue::Of(tensor);
  for (const auto& [name, value] : data.value_inputs) given[name] = value;
  runtime::NamedValues inputs;
  for (const ir::Value* input : graph.inputs()) {
    if (given.count(input->name())) inputs.emplace_back(input->name(), given[input->name()]);
  }
  auto outputs = session.RunValues(inputs);
  if (!outputs.ok()) return FromStatus(outputs.status(), mode + " run");
  std::map<std::string, RunValue> expected_values(data.value_outputs.begin(),
                                                  data.value_outputs.end());
  if (outputs->size() != data.outputs.size()) {
    return {Verdict::kFail, mode + ": " + std::to_string(outputs->size()) + " outputs, expected " +
                                std::to_string(data.outputs.size())};
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string& name = (*outputs)[i].first;
    RunValue expected =
        data.outputs[i].is_valid() ? RunValue::Of(data.outputs[i]) : expected_values[name];
    std::string diff = CompareValues((*outputs)[i].second, expected, tolerance);
    if (!diff.empty()) return {Verdict::kFail, mode + ": output '" + name + "': " + diff};
  }
  return {};
}

Outcome RunMode(const ir::Graph& graph, const NodeTestData& data, bool use_onednn,
                const Tolerance& tolerance) {
  const std::string mode = use_onednn ? "onednn" : "reference";
  runtime::SessionOptions options;
  options.use_onednn = use_onednn;
  auto session = runtime::Session::Create(graph, options);
  if (!session.ok()) return FromStatus(session.status(), mode + " create");
  if (data.has_values()) return RunValueModel(graph, data, **session, mode, tolerance);
  std::map<std::string, std::vector<int64_t>> sizes;
  for (const auto& [name, tensor] : data.inputs) sizes[name] = tensor.sizes();
  auto plan = (*session)->Prepare(sizes);
  // FailedPrecondition: sizes depend on values computed at run time, so the session
  // compiles its plans in stages while it runs; Run reports their errors.
  if (!plan.ok() && plan.status().code() != StatusCode::kFailedPrecondition) {
    return FromStatus(plan.status(), mode + " compile");
  }
  // A kernel may refuse an attribute or input value it only sees at run time (Dropout's
  // training_mode input): Unimplemented there is UNSUPPORTED too.
  auto outputs = (*session)->Run(data.inputs);
  if (!outputs.ok()) return FromStatus(outputs.status(), mode + " run");
  if (outputs->size() != data.outputs.size()) {
    return {Verdict::kFail, mode + ": " + std::to_string(outputs->size()) + " outputs, expected " +
                                std::to_string(data.outputs.size())};
  }
  for (size_t i = 0; i < data.outputs.size(); ++i) {
    std::string diff = CompareTensors((*outputs)[i].second, data.outputs[i], tolerance);
    if (!diff.empty()) {
      return {Verdict::kFail, mode + ": output '" + (*outputs)[i].first + "': " + diff};
    }
  }
  return {};
}

// Both tiers (or oneDNN only): FAIL if either fails (naming each failing tier), else
// UNSUPPORTED if either is, else PASS.
Outcome RunTiers(const ir::Graph& graph, const NodeTestData& data, const RunOptions& options) {
  Outcome failed{Verdict::kPass, ""}, result;
  for (bool use_onednn : {true, false}) {
    if (!use_onednn && !options.reference_tier) continue;
    Outcome mode = RunMode(graph, data, use_onednn, options.tolerance);
    if (mode.verdict == Verdict::kFail) {
      failed.verdict = Verdict::kFail;
      failed.detail += (failed.detail.empty() ? "" : " | ") + mode.detail;
    }
    if (mode.verdict == Verdict::kUnsupported && result.verdict == Verdict::kPass) result = mode;
  }
  return failed.verdict == Verdict::kFail ? failed : result;
}

bool NeedsConstantInputs(const Outcome& outcome) {
  // (Only tensor inputs are bound; see RetryWithConstantInputs.)
  return outcome.verdict == Verdict::kUnsupported &&
         outcome.detail.find("computed at run time") != std::string::npos;
}

// Reruns an UNSUPPORTED-for-run-time-inputs test with its inputs after the first (the
// data) as initializers, then, if that is not enough (Range), with all of them.
Outcome RetryWithConstantInputs(const std::string& dir, const NodeTestData& data, Outcome outcome,
                                const RunOptions& options) {
  for (size_t first_constant : {size_t{1}, size_t{0}}) {
    if (data.inputs.size() <= first_constant) continue;
    runtime::NamedTensors constants(data.inputs.begin() + first_constant, data.inputs.end());
    NodeTestData rest{.inputs = {data.inputs.begin(), data.inputs.begin() + first_constant},
                      .outputs = data.outputs};
    auto graph = LoadModelWithConstantInputs(dir + "/model.onnx", constants);
    if (!graph.ok()) {
      return {Verdict::kFail, "binding constant inputs: " + graph.status().ToString()};
    }
    Outcome retry = RunTiers(**graph, rest, options);
    if (NeedsConstantInputs(retry)) continue;
    if (retry.verdict == Verdict::kFail) {
      retry.detail = "with inputs bound as constants: " + retry.detail;
      return retry;
    }
    outcome.passes_with_constant_inputs = retry.verdict == Verdict::kPass;
    return outcome;
  }
  return outcome;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  static const char* const kNames[] = {"PASS", "UNSUPPORTED", "FAIL"};
  return kNames[static_cast<int>(verdict)];
}

Outcome RunTestFolder(const std::string& dir, const RunOptions& options) {
  auto graph = ir::LoadModel(dir + "/model.onnx");
  if (!graph.ok()) return FromStatus(graph.status(), "load");
  std::vector<std::filesystem::path> data_sets;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      data_sets.push_back(entry.path());
    }
  }
  std::sort(data_sets.begin(), data_sets.end());
  Outcome result;
  for (const auto& data_set : data_sets) {
    auto data = ReadNodeTestData(**graph, data_set);
    if (!data.ok()) return FromStatus(data.status(), "read data");
    Outcome outcome = RunTiers(**graph, *data, options);
    if (NeedsConstantInputs(outcome) && !data->has_values()) {
      outcome = RetryWithConstantInputs(dir, *data, outcome, options);
    }
    if (outcome.verdict == Verdict::kFail) return outcome;
    if (outcome.verdict == Verdict::kUnsupported) result = outcome;
  }
  return result;
}

std::string GroupOf(const std::string& dir) {
  std::vector<std::string> ops = ModelOpTypes(dir + "/model.onnx");
  std::set<std::string> distinct, missing;
  for (const std::string& op : ops) {
    if (op == "Constant") continue;
    distinct.insert(op);
    if (runtime::ReferenceRegistry::Get().Find(op) == nullptr) missing.insert(op);
  }
  if (distinct.size() == 1) return *distinct.begin();
  std::string group;
  for (const std::string& op : missing) group += (group.empty() ? "" : "+") + op;
  if (!group.empty()) return group;
  for (const std::string& op : ops) {
    if (op != "Constant") return "(multi-node) " + op;
  }
  return "(unreadable model)";
}

}  // namespace qtune::conformance
