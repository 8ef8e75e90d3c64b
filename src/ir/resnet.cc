#include "ir/resnet.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/check.h"
#include "ir/builder.h"

namespace qtune::ir {
namespace {

// Builds the layers in torchvision's order and with its parameter names ("conv1.weight",
// "layer2.0.downsample.1.running_var", "fc.bias").
class ResNetBuilder {
 public:
  explicit ResNetBuilder(uint64_t seed) : builder_(13), rng_(seed) {}

  GraphBuilder& builder() { return builder_; }

  // Conv (no bias) + BatchNormalization; `bn_scale` bounds the BatchNormalization gamma.
  Value* ConvBn(Value* x, const std::string& conv, const std::string& bn, int64_t c_in,
                int64_t c_out, int64_t kernel, int64_t stride, float bn_scale) {
    int64_t pad = kernel / 2;
    float he_std = std::sqrt(2.0f / static_cast<float>(c_in * kernel * kernel));
    Value* w =
        builder_.Initializer(conv + ".weight", Normal({c_out, c_in, kernel, kernel}, he_std));
    Value* y = builder_.Op("Conv", {x, w},
                           {Attribute::Ints("dilations", {1, 1}), Attribute::Int("group", 1),
                            Attribute::Ints("kernel_shape", {kernel, kernel}),
                            Attribute::Ints("pads", {pad, pad, pad, pad}),
                            Attribute::Ints("strides", {stride, stride})});
    Value* gamma =
        builder_.Initializer(bn + ".weight", Uniform({c_out}, 0.5f * bn_scale, bn_scale));
    Value* beta = builder_.Initializer(bn + ".bias", Uniform({c_out}, -0.1f, 0.1f));
    Value* mean = builder_.Initializer(bn + ".running_mean", Uniform({c_out}, -0.1f, 0.1f));
    Value* var = builder_.Initializer(bn + ".running_var", Uniform({c_out}, 0.5f, 1.5f));
    return builder_.Op("BatchNormalization", {y, gamma, beta, mean, var},
                       {Attribute::Float("epsilon", 1e-5f), Attribute::Float("momentum", 0.9f)});
  }

  Value* Relu(Value* x) { return builder_.Op("Relu", {x}); }

  // torchvision BasicBlock: conv3x3-bn-relu-conv3x3-bn, + shortcut, relu.
  Value* BasicBlock(Value* x, const std::string& name, int64_t c_in, int64_t c_out,
                    int64_t stride) {
    Value* y = Relu(ConvBn(x, name + ".conv1", name + ".bn1", c_in, c_out, 3, stride, 1.0f));
    y = ConvBn(y, name + ".conv2", name + ".bn2", c_out, c_out, 3, 1, 0.5f);
    Value* shortcut = x;
    if (stride != 1 || c_in != c_out) {
      shortcut =
          ConvBn(x, name + ".downsample.0", name + ".downsample.1", c_in, c_out, 1, stride, 1.0f);
    }
    return Relu(builder_.Op("Add", {y, shortcut}));
  }

  Value* Gemm(Value* x, int64_t c_in, int64_t c_out) {
    Value* w = builder_.Initializer(
        "fc.weight", Normal({c_out, c_in}, 1.0f / std::sqrt(static_cast<float>(c_in))));
    Value* b = builder_.Initializer("fc.bias", Uniform({c_out}, -0.1f, 0.1f));
    OpOptions options;
    options.output_names = {"logits"};
    return builder_.Op("Gemm", {x, w, b},
                       {Attribute::Float("alpha", 1.0f), Attribute::Float("beta", 1.0f),
                        Attribute::Int("transB", 1)},
                       options);
  }

 private:
  Tensor Normal(const std::vector<int64_t>& sizes, float stddev) {
    std::normal_distribution<float> dist(0.0f, stddev);
    Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
    for (float& v : t.span<float>()) v = dist(rng_);
    return t;
  }
  Tensor Uniform(const std::vector<int64_t>& sizes, float low, float high) {
    std::uniform_real_distribution<float> dist(low, high);
    Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
    for (float& v : t.span<float>()) v = dist(rng_);
    return t;
  }

  GraphBuilder builder_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Graph> BuildResNet18(const ResNet18Options& options) {
  QTUNE_CHECK(options.batch >= 0 && options.num_classes > 0);
  ResNetBuilder r(options.seed);
  GraphBuilder& b = r.builder();
  Dim batch = options.batch > 0 ? Dim::Known(options.batch) : Dim::Symbolic("N");
  Value* x = b.Input("input", DataType::kFloat32,
                     Shape({batch, Dim::Known(3), Dim::Known(224), Dim::Known(224)}));
  x = r.Relu(r.ConvBn(x, "conv1", "bn1", 3, 64, 7, 2, 1.0f));
  x = b.Op("MaxPool", {x},
           {Attribute::Int("ceil_mode", 0), Attribute::Ints("kernel_shape", {3, 3}),
            Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Ints("strides", {2, 2})});
  int64_t channels = 64;
  const int64_t stage_channels[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    std::string layer = "layer" + std::to_string(stage + 1);
    int64_t c_out = stage_channels[stage];
    x = r.BasicBlock(x, layer + ".0", channels, c_out, stage == 0 ? 1 : 2);
    x = r.BasicBlock(x, layer + ".1", c_out, c_out, 1);
    channels = c_out;
  }
  x = b.Op("GlobalAveragePool", {x});
  x = b.Op("Flatten", {x}, {Attribute::Int("axis", 1)});
  Value* logits = r.Gemm(x, channels, options.num_classes);
  b.SetType(logits, DataType::kFloat32, Shape({batch, Dim::Known(options.num_classes)}));
  b.Output(logits);
  return b.Build();
}

}  // namespace qtune::ir
