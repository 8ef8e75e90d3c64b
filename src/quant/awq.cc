#include "quant/awq.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/logging.h"
#include "quant/conv_awq.h"
#include "quant/placement_rules.h"
#include "runtime/session.h"

namespace qtune::quant {
namespace {

// sum over rows and columns of (x W' - y)^2, W' the dequantized matrix divided by s.
double OutputError(const QuantizedMatrix& q, std::span<const float> inv_s, std::span<const float> x,
                   int64_t rows, const std::vector<double>& y) {
  const int64_t k = q.k, n = q.n;
  // W' row-major [K][N].
  std::vector<float> wq(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k; ++r) {
    for (int64_t c = 0; c < n; ++c) wq[r * n + c] = q.Dequantize(r, c) * inv_s[r];
  }
  double err = 0.0;
  std::vector<float> acc(static_cast<size_t>(n));
  for (int64_t i = 0; i < rows; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    const float* xi = x.data() + i * k;
    for (int64_t r = 0; r < k; ++r) {
      const float xv = xi[r];
      if (xv == 0.0f) continue;
      const float* wr = wq.data() + r * n;
      for (int64_t c = 0; c < n; ++c) acc[c] += xv * wr[c];
    }
    for (int64_t c = 0; c < n; ++c) {
      const double d = acc[c] - y[i * n + c];
      err += d * d;
    }
  }
  return err;
}

}  // namespace

AwqResult SearchAwqScale(const float* w, int64_t k, int64_t n, int64_t row_stride,
                         int64_t col_stride, std::span<const float> x, int64_t rows,
                         std::span<const float> mean_abs, const MatrixQuantSpec& spec,
                         int alpha_steps) {
  // Reference output y = x W.
  std::vector<double> y(static_cast<size_t>(rows * n), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t r = 0; r < k; ++r) {
      const double xv = x[i * k + r];
      if (xv == 0.0) continue;
      for (int64_t c = 0; c < n; ++c) y[i * n + c] += xv * w[r * row_stride + c * col_stride];
    }
  }
  std::vector<float> scaled(static_cast<size_t>(k * n)), inv_s(static_cast<size_t>(k));
  return SearchAlphaGrid(mean_abs.first(static_cast<size_t>(k)), alpha_steps,
                         [&](const std::vector<float>& s) {
                           for (int64_t r = 0; r < k; ++r) {
                             inv_s[r] = 1.0f / s[r];
                             for (int64_t c = 0; c < n; ++c) {
                               scaled[r * n + c] = w[r * row_stride + c * col_stride] * s[r];
                             }
                           }
                           QuantizedMatrix q = QuantizeMatrix(scaled.data(), k, n, n, 1, spec);
                           return OutputError(q, inv_s, x, rows, y);
                         });
}

namespace {

struct LayerStats {
  QuantSite* site = nullptr;
  const ir::Node* layer = nullptr;
  std::string input;  // the layer's input 0
  int64_t k = 0;
  bool conv = false;       // a group = 1 Conv (conv_awq.h): x [N, K, spatial...]
  int64_t kh = 0, kw = 0;  // its kernel (2-D convs: patches for the AWQ loss)
  std::vector<double> sum_abs, sum_sq;
  int64_t count = 0;
  std::vector<float> rows;  // kept rows, K each
};

}  // namespace

Status SearchWeightScales(const ir::Graph& graph, QuantPlan& plan, CalibrationSource& source,
                          const WeightSearchOptions& options) {
  std::vector<LayerStats> layers;
  for (QuantSite& site : plan.sites) {
    if (site.kind != QuantSite::Kind::kWeight || !site.enabled || !site.config.enable) continue;
    if (site.config.algorithm == WeightAlgorithm::kRtn || site.consumers.empty()) continue;
    const ir::Node* layer = graph.FindNode(site.consumers.front().first);
    const ir::Value* weight = graph.FindValue(site.value);
    const bool conv =
        layer != nullptr && layer->op_type() == "Conv" && layer->GetInt("group", 1) == 1;
    const size_t rank =
        weight != nullptr && weight->is_initializer() ? weight->initializer().rank() : 0;
    if (layer == nullptr || weight == nullptr || !weight->is_initializer() ||
        (conv ? rank < 3 : rank != 2) || layer->input(0) == nullptr) {
      return InvalidArgumentError(fmt::format(
          "{} search for weight '{}': its layer '{}' is not a MatMul/Gemm with a 2-D constant "
          "weight or a group = 1 Conv in this graph",
          WeightAlgorithmName(site.config.algorithm), site.value, site.consumers.front().first));
    }
    const int axis = *ReductionAxis(*layer, static_cast<int>(rank));
    LayerStats stats;
    stats.site = &site;
    stats.layer = layer;
    stats.input = layer->input(0)->name();
    stats.k = weight->initializer().sizes()[axis];
    stats.conv = conv;
    if (conv && rank == 4) {
      stats.kh = weight->initializer().sizes()[2];
      stats.kw = weight->initializer().sizes()[3];
    }
    stats.sum_abs.assign(stats.k, 0.0);
    stats.sum_sq.assign(stats.k, 0.0);
    layers.push_back(std::move(stats));
  }
  if (layers.empty()) return Status::Ok();

  std::unique_ptr<ir::Graph> clone = graph.Clone();
  for (const LayerStats& l : layers) {
    ir::Value* v = clone->FindValue(l.input);
    if (!v->is_graph_input() && !v->is_graph_output()) RETURN_IF_ERROR(clone->AddOutput(v));
  }
  runtime::SessionOptions session_options;
  session_options.threads = options.threads;
  session_options.use_onednn = options.use_onednn;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(*clone, session_options));
  const int64_t total = std::min(source.num_samples(), std::max<int64_t>(options.max_samples, 1));
  const int64_t rows_per_sample =
      std::max<int64_t>(1, options.max_rows / std::max<int64_t>(total, 1));
  QTUNE_LOG_INFO("weight scale search (clip/awq): {} layers, {} samples of {}", layers.size(),
                 total, source.Describe());
  for (int64_t i = 0; i < total; ++i) {
    const std::string where = fmt::format("weight scale search, calibration sample {}", i);
    auto batch = source.Batch(i, 1);
    if (!batch.ok()) return batch.status().WithContext(where);
    runtime::NamedTensors inputs(batch->begin(), batch->end());
    auto outputs = session->Run(inputs);
    if (!outputs.ok()) return outputs.status().WithContext(where);
    std::map<std::string, const Tensor*> tensors;
    for (const auto& [name, tensor] : inputs) tensors[name] = &tensor;
    for (const auto& [name, tensor] : *outputs) tensors[name] = &tensor;
    for (LayerStats& l : layers) {
      auto it = tensors.find(l.input);
      if (l.conv) {
        if (it == tensors.end() || it->second->dtype() != DataType::kFloat32 ||
            it->second->rank() < 3 || it->second->size(1) != l.k) {
          return InvalidArgumentError(
              fmt::format("{}: input '{}' of conv '{}' is not a float32 [N, C = {}, ...] tensor",
                          where, l.input, l.layer->name(), l.k));
        }
        l.count += AccumulateChannelStats(*it->second, l.sum_abs, l.sum_sq);
        if (l.kh > 0 && l.site->config.algorithm == WeightAlgorithm::kAwq) {
          const int64_t kept = static_cast<int64_t>(l.rows.size()) / (l.k * l.kh * l.kw);
          AppendConvPatches(*it->second, *l.layer, l.kh, l.kw,
                            std::min(rows_per_sample, options.max_rows - kept), l.rows);
        }
        continue;
      }
      if (it == tensors.end() || it->second->dtype() != DataType::kFloat32 ||
          it->second->rank() == 0 || it->second->sizes().back() != l.k) {
        return InvalidArgumentError(fmt::format(
            "{}: input '{}' of layer '{}' is not a float32 tensor whose last dimension is K = {}",
            where, l.input, l.layer->name(), l.k));
      }
      const float* x = it->second->data<float>();
      const int64_t rows = it->second->num_elements() / l.k;
      const int64_t stride = std::max<int64_t>(1, rows / rows_per_sample);
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = x + r * l.k;
        for (int64_t c = 0; c < l.k; ++c) {
          l.sum_abs[c] += std::fabs(row[c]);
          l.sum_sq[c] += static_cast<double>(row[c]) * row[c];
        }
        if (r % stride == 0 && static_cast<int64_t>(l.rows.size()) < options.max_rows * l.k) {
          l.rows.insert(l.rows.end(), row, row + l.k);
        }
      }
      l.count += rows;
    }
  }
  for (LayerStats& l : layers) {
    QuantSite& site = *l.site;
    std::vector<float> mean_abs(l.k);
    site.input_mean_square.assign(l.k, 0.0f);
    for (int64_t c = 0; c < l.k; ++c) {
      mean_abs[c] = static_cast<float>(l.sum_abs[c] / std::max<int64_t>(l.count, 1));
      site.input_mean_square[c] = static_cast<float>(l.sum_sq[c] / std::max<int64_t>(l.count, 1));
    }
    if (site.config.algorithm != WeightAlgorithm::kAwq) continue;
    const Tensor& w = graph.FindValue(site.value)->initializer();
    if (l.conv) {
      MatrixQuantSpec spec;
      spec.bits = site.config.bits;
      spec.symmetric = site.config.symmetric;
      spec.group = site.config.block_size > 0 ? site.config.block_size : l.k;
      spec.fp16_scales = site.config.scale_type == ScaleType::kFloat16;
      const int64_t len = l.k * std::max<int64_t>(l.kh * l.kw, 1);
      const int64_t rows = static_cast<int64_t>(l.rows.size()) / len;
      if (rows == 0) {
        QTUNE_LOG_INFO("awq: {} is not a 2-D conv: no patches, alpha 0 (RTN)", l.layer->name());
        continue;
      }
      AwqResult r = SearchConvAwqScale(w, l.rows, rows, mean_abs, spec, options.alpha_steps);
      if (r.alpha > 0.0f) site.input_scale = r.scale;
      QTUNE_LOG_INFO("awq: {} alpha {:.1f}, output error {:.4g} (rtn {:.4g}) on {} patches",
                     l.layer->name(), r.alpha, r.loss, r.loss_rtn, rows);
      continue;
    }
    const bool transposed = *ReductionAxis(*l.layer, 2) == 1;
    const int64_t n = w.sizes()[transposed ? 0 : 1];
    MatrixQuantSpec spec;
    spec.bits = site.config.bits;
    spec.symmetric = site.config.symmetric;
    spec.group = site.config.block_size > 0 ? site.config.block_size : l.k;
    spec.fp16_scales = site.config.scale_type == ScaleType::kFloat16;
    AwqResult r = SearchAwqScale(w.data<float>(), l.k, n, transposed ? 1 : n, transposed ? l.k : 1,
                                 l.rows, static_cast<int64_t>(l.rows.size()) / l.k, mean_abs, spec,
                                 options.alpha_steps);
    if (r.alpha > 0.0f) site.input_scale = r.scale;  // alpha 0: s = 1, nothing to fold
    QTUNE_LOG_INFO("awq: {} alpha {:.1f}, output error {:.4g} (rtn {:.4g})", l.layer->name(),
                   r.alpha, r.loss, r.loss_rtn);
  }
  return Status::Ok();
}

}  // namespace qtune::quant
