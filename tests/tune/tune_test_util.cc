#include "tune/tune_test_util.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/npy.h"

namespace qtune::tune::testing {

TuneOptions FastTuneOptions(std::vector<std::string> candidates) {
  TuneOptions o;
  o.calib_specs = {kFmnistCalib};
  o.max_calib_samples = 64;
  o.candidates = std::move(candidates);
  o.threads = {1};
  o.warmup = 1;
  o.iters = 3;
  o.rounds = 1;
  o.worker_executable = QTUNE_BINARY;
  return o;
}

std::string LargestWeightName(const ir::Graph& model) {
  std::string best;
  int64_t best_elements = -1;
  for (const ir::Value* v : model.initializers()) {
    if (v->dtype() != DataType::kFloat32) continue;
    if (v->initializer().num_elements() > best_elements) {
      best_elements = v->initializer().num_elements();
      best = v->name();
    }
  }
  return best;
}

std::unique_ptr<ir::Graph> WithScaledWeight(const ir::Graph& model, const std::string& name,
                                            float factor) {
  auto copy = model.Clone();
  ir::Value* v = copy->FindValue(name);
  EXPECT_NE(v, nullptr) << name;
  if (v == nullptr) return copy;
  Tensor t = v->initializer().Clone();
  for (float& x : t.span<float>()) x *= factor;
  EXPECT_TRUE(copy->SetInitializer(v, t).ok());
  return copy;
}

runtime::NamedTensors CalibInputs(int64_t count) {
  auto all = ReadNpy(kFmnistCalib);
  EXPECT_TRUE(all.ok()) << all.status().ToString();
  std::vector<int64_t> sizes = all->sizes();
  sizes[0] = count;
  auto t = Tensor::Allocate(DataType::kFloat32, sizes);
  EXPECT_TRUE(t.ok());
  std::memcpy(t->raw_data(), all->raw_data(), t->byte_size());
  return {{"input", std::move(t).value()}};
}

runtime::NamedTensors RunGraph(const ir::Graph& graph, int threads,
                               const runtime::NamedTensors& inputs, bool bf16) {
  runtime::SessionOptions options;
  options.threads = threads;
  options.bf16 = bf16;
  auto session = runtime::Session::Create(graph, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  auto outputs = (*session)->Run(inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  return outputs.ok() ? std::move(outputs).value() : runtime::NamedTensors{};
}

bool SameOutputs(const runtime::NamedTensors& a, const runtime::NamedTensors& b) {
  if (a.size() != b.size() || a.empty()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor& x = a[i].second;
    const Tensor& y = b[i].second;
    if (x.sizes() != y.sizes() || x.dtype() != y.dtype()) return false;
    if (std::memcmp(x.raw_data(), y.raw_data(), x.byte_size()) != 0) return false;
  }
  return true;
}

}  // namespace qtune::tune::testing
