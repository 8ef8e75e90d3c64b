#include "quant/output_sqnr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace qtune::quant {
namespace {

using Outputs = std::vector<runtime::NamedTensors>;  // one entry per run of a sample batch

// The measured samples, cut into the batches the model accepts.
struct SampleBatches {
  std::vector<runtime::NamedTensors> batches;
  int64_t samples = 0;
};

StatusOr<SampleBatches> LoadSamples(const ir::Graph& graph, CalibrationSource& source,
                                    int64_t max_samples) {
  SampleBatches out;
  const std::optional<int64_t> fixed = FixedBatchSize(graph);
  // At least one batch of a fixed batch size, whatever max_samples says.
  int64_t total =
      std::min(source.num_samples(), std::max<int64_t>({max_samples, fixed.value_or(1), 1}));
  const int64_t batch = fixed.value_or(total);
  total = total / batch * batch;
  if (total <= 0) {
    return InvalidArgumentError(
        fmt::format("output SQNR: {} gives no full batch of {} samples", source.Describe(), batch));
  }
  for (int64_t first = 0; first < total; first += batch) {
    ASSIGN_OR_RETURN(auto tensors, source.Batch(first, batch));
    runtime::NamedTensors inputs;
    for (auto& [name, tensor] : tensors) inputs.emplace_back(name, tensor.Clone());
    out.batches.push_back(std::move(inputs));
  }
  out.samples = total;
  return out;
}

// The tensors compared: every float32 graph output, or, for an output computed by Sigmoid
// or Softmax, that op's input (the logits): a saturated probability near 0 or 1 turns
// tiny logit changes into huge relative errors, or hides large ones.
std::vector<std::string> MeasuredValues(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (const ir::Value* output : graph.outputs()) {
    if (output->dtype() != DataType::kFloat32 && output->dtype() != DataType::kUndefined) continue;
    const ir::Node* producer = output->producer();
    const bool saturating = producer != nullptr && producer->num_inputs() == 1 &&
                            (producer->op_type() == "Sigmoid" || producer->op_type() == "Softmax");
    names.push_back(saturating ? producer->input(0)->name() : output->name());
  }
  return names;
}

// Runs `graph` on every batch; returns the `names` tensors, per batch, in `names` order.
StatusOr<Outputs> RunGraph(const ir::Graph& graph, const std::vector<std::string>& names,
                           const std::vector<runtime::NamedTensors>& batches, int threads,
                           bool bf16 = false) {
  std::unique_ptr<ir::Graph> clone = graph.Clone();
  for (const std::string& name : names) {
    ir::Value* value = clone->FindValue(name);
    if (value == nullptr) return InternalError("output SQNR: lost the value '" + name + "'");
    if (!value->is_graph_output()) RETURN_IF_ERROR(clone->AddOutput(value));
  }
  runtime::SessionOptions session_options;
  session_options.threads = threads;
  session_options.bf16 = bf16;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(*clone, session_options));
  Outputs outputs;
  for (const auto& inputs : batches) {
    ASSIGN_OR_RETURN(auto result, session->Run(inputs));
    runtime::NamedTensors picked;
    for (const std::string& name : names) {
      auto it = std::find_if(result.begin(), result.end(),
                             [&](const auto& named) { return named.first == name; });
      if (it == result.end()) return InternalError("output SQNR: no output '" + name + "'");
      picked.push_back(std::move(*it));
    }
    outputs.push_back(std::move(picked));
  }
  return outputs;
}

}  // namespace

StatusOr<std::unique_ptr<OutputComparer>> OutputComparer::Create(const ir::Graph& float_graph,
                                                                 CalibrationSource& source,
                                                                 int64_t max_samples, int threads) {
  std::unique_ptr<OutputComparer> c(new OutputComparer());
  c->threads_ = threads;
  ASSIGN_OR_RETURN(SampleBatches samples, LoadSamples(float_graph, source, max_samples));
  c->batches_ = std::move(samples.batches);
  c->samples_ = samples.samples;
  c->names_ = MeasuredValues(float_graph);
  ASSIGN_OR_RETURN(c->reference_, RunGraph(float_graph, c->names_, c->batches_, threads));
  bool any_float = false;
  for (const auto& [name, tensor] : c->reference_.front()) {
    any_float = any_float || tensor.dtype() == DataType::kFloat32;
  }
  if (!any_float) return InvalidArgumentError("the model has no float32 output to measure");
  if (std::string bad = FirstNonFiniteOutput(c->reference_); !bad.empty()) {
    return InvalidArgumentError("the float model's '" + bad +
                                "' is NaN or inf on the calibration samples, so there is no "
                                "reference to measure the quantized model against; check the "
                                "model and the calibration data");
  }
  return c;
}

StatusOr<OutputSqnr> OutputComparer::Compare(const ir::Graph& quantized, bool bf16) const {
  ASSIGN_OR_RETURN(Outputs outputs, RunGraph(quantized, names_, batches_, threads_, bf16));
  return MeasureOutputSqnr(reference_, outputs);
}

OutputSqnr MeasureOutputSqnr(const std::vector<runtime::NamedTensors>& reference,
                             const std::vector<runtime::NamedTensors>& measured) {
  OutputSqnr result;
  result.db = std::numeric_limits<double>::infinity();
  if (reference.empty()) return result;
  for (size_t o = 0; o < reference.front().size(); ++o) {
    if (reference.front()[o].second.dtype() != DataType::kFloat32) continue;
    double signal = 0, noise = 0;
    for (size_t b = 0; b < reference.size(); ++b) {
      auto ref = reference[b][o].second.span<float>();
      auto got = measured[b][o].second.span<float>();
      for (size_t i = 0; i < ref.size(); ++i) {
        // NaN would make the noise NaN, and NaN > 0 is false: without this check a NaN
        // output would score +inf, "identical to float".
        if (!std::isfinite(got[i])) {
          result.db = -std::numeric_limits<double>::infinity();
          result.non_finite_output = measured[b][o].first;
          return result;
        }
        const double d = static_cast<double>(ref[i]) - got[i];
        signal += static_cast<double>(ref[i]) * ref[i];
        noise += d * d;
      }
    }
    if (noise > 0) {
      result.db = std::min(result.db, 10.0 * std::log10(std::max(signal, 1e-30) / noise));
    }
  }
  return result;
}

std::string FirstNonFiniteOutput(const std::vector<runtime::NamedTensors>& outputs) {
  for (const runtime::NamedTensors& batch : outputs) {
    for (const auto& [name, tensor] : batch) {
      if (tensor.dtype() != DataType::kFloat32) continue;
      auto v = tensor.span<float>();
      if (!std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); })) {
        return name;
      }
    }
  }
  return "";
}

}  // namespace qtune::quant
