// Reference kernel of qtune::Attention (see fused_ops.h): per batch, head and query row,
// the scaled dot products with every key (in double), the mask added with numpy
// broadcasting, a max-subtracted softmax and the weighted sum of the values.
#include <cmath>
#include <vector>

#include "runtime/fusion/fused_ops.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime {
namespace {

StatusOr<std::vector<Tensor>> AttentionReference(const KernelArgs& args) {
  const std::string where = args.node.DebugName();
  if (args.inputs.size() < 3) return InvalidArgumentError(where + ": needs Q, K and V");
  const Tensor& q = args.inputs[0];
  const Tensor& k = args.inputs[1];
  const Tensor& v = args.inputs[2];
  const Tensor* mask =
      args.inputs.size() > 3 && args.inputs[3].is_valid() ? &args.inputs[3] : nullptr;
  for (const Tensor* t : {&q, &k, &v}) {
    if (t->dtype() != DataType::kFloat32 || t->rank() != 3) {
      return InvalidArgumentError(where + ": Q, K and V must be float32 [B, S, H*D], got " +
                                  t->DebugString());
    }
  }
  const int64_t heads = args.node.GetInt("num_heads", 0);
  const float scale = args.node.GetFloat("scale", 1.0f);
  const int64_t b_size = q.size(0), s_size = q.size(1), hidden = q.size(2), t_size = k.size(1);
  if (heads <= 0 || hidden % heads != 0 || k.size(0) != b_size || v.size(0) != b_size ||
      k.size(2) != hidden || v.size(2) != hidden || v.size(1) != t_size) {
    return InvalidArgumentError(where + ": Q " + q.DebugString() + ", K " + k.DebugString() +
                                ", V " + v.DebugString() + " do not fit num_heads " +
                                std::to_string(heads));
  }
  const int64_t d_size = hidden / heads;
  // Mask strides over [B, H, S, T] (0 where the mask broadcasts).
  int64_t mask_strides[4] = {0, 0, 0, 0};
  if (mask != nullptr) {
    const int64_t full[4] = {b_size, heads, s_size, t_size};
    if (mask->dtype() != DataType::kFloat32 || mask->rank() > 4) {
      return InvalidArgumentError(where + ": the mask " + mask->DebugString() +
                                  " must be float32 of rank <= 4");
    }
    const size_t offset = 4 - mask->rank();
    int64_t stride = 1;
    for (size_t i = 4; i-- > offset;) {
      const int64_t n = mask->size(i - offset);
      if (n != 1 && n != full[i]) {
        return InvalidArgumentError(where + ": the mask " + mask->DebugString() +
                                    " does not broadcast to the scores");
      }
      mask_strides[i] = n == 1 ? 0 : stride;
      stride *= n;
    }
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kFloat32, q.sizes()));
  const float* qd = q.data<float>();
  const float* kd = k.data<float>();
  const float* vd = v.data<float>();
  float* yd = y.data<float>();
  std::vector<double> p(t_size);
  for (int64_t b = 0; b < b_size; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t s = 0; s < s_size; ++s) {
        const float* qrow = qd + (b * s_size + s) * hidden + h * d_size;
        double max = -INFINITY;
        for (int64_t t = 0; t < t_size; ++t) {
          const float* krow = kd + (b * t_size + t) * hidden + h * d_size;
          double dot = 0;
          for (int64_t d = 0; d < d_size; ++d) dot += double(qrow[d]) * krow[d];
          float score = static_cast<float>(dot) * scale;
          if (mask != nullptr) {
            score += mask->data<float>()[b * mask_strides[0] + h * mask_strides[1] +
                                         s * mask_strides[2] + t * mask_strides[3]];
          }
          p[t] = score;
          max = std::max(max, p[t]);
        }
        double sum = 0;
        for (int64_t t = 0; t < t_size; ++t) sum += p[t] = std::exp(p[t] - max);
        float* yrow = yd + (b * s_size + s) * hidden + h * d_size;
        for (int64_t d = 0; d < d_size; ++d) {
          double acc = 0;
          for (int64_t t = 0; t < t_size; ++t) {
            acc += p[t] / sum * vd[(b * t_size + t) * hidden + h * d_size + d];
          }
          yrow[d] = static_cast<float>(acc);
        }
      }
    }
  }
  std::vector<Tensor> out;
  out.push_back(std::move(y));
  return out;
}

}  // namespace

void RegisterAttentionReference(ReferenceRegistry& registry) {
  registry.Register("qtune::Attention", AttentionReference);
}

}  // namespace qtune::runtime
