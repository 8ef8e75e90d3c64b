#include "quant/calibrate.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/float_convert.h"
#include "core/logging.h"
#include "core/progress.h"
#include "quant/calibrator.h"
#include "runtime/session.h"

namespace qtune::quant {
namespace {

// Runs fn(0..n-1) on up to `threads` threads; returns the first error.
Status ParallelFor(size_t n, int threads, const std::function<Status(size_t)>& fn) {
  const size_t workers = std::min<size_t>(n, static_cast<size_t>(std::max(threads, 1)));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) RETURN_IF_ERROR(fn(i));
    return Status::Ok();
  }
  std::atomic<size_t> next{0};
  std::vector<Status> errors(workers);
  std::vector<std::thread> pool;
  for (size_t w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      for (size_t i = next++; i < n; i = next++) {
        Status status = fn(i);
        if (!status.ok()) {
          errors[w] = status;
          return;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  for (const Status& status : errors) RETURN_IF_ERROR(status);
  return Status::Ok();
}

// The values of a floating-point tensor as float32 (a view when it already is one).
StatusOr<std::span<const float>> AsFloat(const Tensor& tensor, std::vector<float>* storage) {
  const int64_t n = tensor.num_elements();
  switch (tensor.dtype()) {
    case DataType::kFloat32:
      return tensor.span<float>();
    case DataType::kFloat64:
      storage->assign(tensor.data<double>(), tensor.data<double>() + n);
      break;
    case DataType::kFloat16:
      storage->resize(n);
      for (int64_t i = 0; i < n; ++i) (*storage)[i] = HalfToFloat(tensor.data<uint16_t>()[i]);
      break;
    case DataType::kBfloat16:
      storage->resize(n);
      for (int64_t i = 0; i < n; ++i) (*storage)[i] = Bfloat16ToFloat(tensor.data<uint16_t>()[i]);
      break;
    default:
      return InvalidArgumentError(std::string("is ") + std::string(DataTypeName(tensor.dtype())) +
                                  ", not floating point");
  }
  return std::span<const float>(*storage);
}

bool IsCalibratableType(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat64 || type == DataType::kFloat16 ||
         type == DataType::kBfloat16;
}

// "'a', 'b (int64)'": `names` are already quoted.
std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

// Checks every request against the graph; one error lists every bad value.
Status CheckRequests(const ir::Graph& graph,
                     const std::map<std::string, CalibrationRequest>& requests) {
  std::vector<std::string> missing, weights, never_computed, not_float;
  for (const auto& [name, request] : requests) {
    const ir::Value* value = graph.FindValue(name);
    if (value == nullptr) {
      missing.push_back("'" + name + "'");
    } else if (value->is_initializer()) {
      weights.push_back("'" + name + "'");
    } else if (value->producer() == nullptr && !value->is_graph_input()) {
      never_computed.push_back("'" + name + "'");
    } else if (value->dtype() != DataType::kUndefined && !IsCalibratableType(value->dtype())) {
      not_float.push_back("'" + name + "' (" + std::string(DataTypeName(value->dtype())) + ")");
    }
  }
  std::string problems;
  auto add = [&](const std::vector<std::string>& names, const char* what) {
    if (!names.empty()) problems += (problems.empty() ? "" : "; ") + JoinNames(names) + what;
  };
  add(missing, " not in the graph");
  add(weights, " are weights (initializers), not activations");
  add(never_computed, " never computed (no node produces them)");
  add(not_float, " not floating point");
  if (problems.empty()) return Status::Ok();
  return InvalidArgumentError("cannot calibrate: " + problems +
                              "; fix the recipe or the placement that requested them");
}

}  // namespace

int64_t AutoCalibrationBatch(int64_t sample_bytes, int64_t budget_bytes) {
  const int64_t per_sample = std::max<int64_t>(3 * sample_bytes, 1);
  return std::clamp<int64_t>(budget_bytes / per_sample, 1, 32);
}

StatusOr<std::map<std::string, TensorRange>> CalibrateActivations(
    const ir::Graph& graph, const std::map<std::string, CalibrationRequest>& requests,
    CalibrationSource& source, const CalibrateOptions& options) {
  std::map<std::string, TensorRange> ranges;
  if (requests.empty()) return ranges;
  RETURN_IF_ERROR(CheckRequests(graph, requests));

  std::vector<std::string> names;
  std::vector<std::unique_ptr<Calibrator>> calibrators;
  for (const auto& [name, request] : requests) {
    auto calibrator = Calibrator::Create(request.calibrator, request.format);
    if (!calibrator.ok()) return calibrator.status().WithContext("value '" + name + "'");
    names.push_back(name);
    calibrators.push_back(std::move(calibrator).value());
  }

  std::unique_ptr<ir::Graph> clone = graph.Clone();
  for (const std::string& name : names) {
    ir::Value* value = clone->FindValue(name);
    if (!value->is_graph_input() && !value->is_graph_output()) {
      RETURN_IF_ERROR(clone->AddOutput(value));
    }
  }
  runtime::SessionOptions session_options;
  session_options.threads = options.threads;
  session_options.use_onednn = options.use_onednn;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(*clone, session_options));

  const std::optional<int64_t> fixed_batch = FixedBatchSize(graph);
  // Auto batch (batch_size <= 0): the first run takes one sample and measures what a
  // sample costs; the rest run in batches that fit the memory budget.
  const bool auto_batch = !fixed_batch && options.batch_size <= 0;
  int64_t batch_size = fixed_batch ? *fixed_batch : std::max<int64_t>(options.batch_size, 1);
  int64_t total = source.num_samples();
  if (options.max_samples > 0) total = std::min(total, options.max_samples);
  if (fixed_batch) {
    int64_t usable = total / batch_size * batch_size;
    if (usable == 0) {
      return InvalidArgumentError("calibration: the model takes batches of exactly " +
                                  std::to_string(batch_size) + " samples but " + source.Describe() +
                                  " gives only " + std::to_string(total));
    }
    if (usable != total) {
      QTUNE_LOG_WARNING(
          "calibration: the model's fixed batch size {} leaves the last {} of {} "
          "samples unused",
          batch_size, total - usable, total);
    }
    total = usable;
  }
  if (auto_batch) {
    QTUNE_LOG_INFO("calibrating {} tensors on {} samples of {}, batch size from a {} MiB budget",
                   names.size(), total, source.Describe(), options.memory_budget_bytes >> 20);
  } else {
    QTUNE_LOG_INFO("calibrating {} tensors on {} samples of {}, batches of {}", names.size(), total,
                   source.Describe(), batch_size);
  }

  std::unique_ptr<ProgressBar> progress;  // counts samples, so it moves per batch
  if (options.show_progress) progress = std::make_unique<ProgressBar>("calibrating", total);
  for (int64_t first = 0; first < total;) {
    const int64_t count = std::min(auto_batch && first == 0 ? 1 : batch_size, total - first);
    const std::string where = "calibration batch of samples [" + std::to_string(first) + ", " +
                              std::to_string(first + count) + ")";
    auto batch = source.Batch(first, count);
    if (!batch.ok()) return batch.status().WithContext(where);
    runtime::NamedTensors inputs(batch->begin(), batch->end());
    auto outputs = session->Run(inputs);
    if (!outputs.ok()) return outputs.status().WithContext(where);
    std::map<std::string, const Tensor*> tensors;
    for (const auto& [name, tensor] : inputs) tensors[name] = &tensor;
    for (const auto& [name, tensor] : *outputs) tensors[name] = &tensor;
    std::vector<std::string> lost;
    for (const std::string& name : names) {
      if (tensors.count(name) == 0) lost.push_back("'" + name + "'");
    }
    if (!lost.empty()) {
      return InternalError("cannot calibrate " + JoinNames(lost) +
                           ": the engine did not return them as outputs");
    }
    RETURN_IF_ERROR(ParallelFor(names.size(), options.threads, [&](size_t i) -> Status {
      std::vector<float> storage;
      auto values = AsFloat(*tensors[names[i]], &storage);
      if (!values.ok()) return values.status().WithContext("value '" + names[i] + "'");
      calibrators[i]->Observe(*values);
      return Status::Ok();
    }));
    if (auto_batch && first == 0) {
      int64_t sample_bytes = 0;
      for (const auto& [name, tensor] : tensors) {
        sample_bytes += static_cast<int64_t>(tensor->byte_size());
      }
      batch_size = AutoCalibrationBatch(sample_bytes, options.memory_budget_bytes);
      QTUNE_LOG_INFO("calibration: batches of {} samples", batch_size);
    }
    first += count;
    if (progress) progress->Advance(count);
  }
  if (progress) progress->Finish();

  std::vector<TensorRange> results(names.size());
  RETURN_IF_ERROR(ParallelFor(names.size(), options.threads, [&](size_t i) -> Status {
    auto range = calibrators[i]->Result();
    if (!range.ok()) return range.status().WithContext("calibrating value '" + names[i] + "'");
    results[i] = *range;
    return Status::Ok();
  }));
  for (size_t i = 0; i < names.size(); ++i) {
    if (calibrators[i]->nonfinite() > 0) {
      QTUNE_LOG_WARNING("calibration: value '{}' held {} NaN or infinite values (ignored)",
                        names[i], calibrators[i]->nonfinite());
    }
    ranges[names[i]] = results[i];
  }
  return ranges;
}

}  // namespace qtune::quant
