// DequantizeLinear(INT4/UINT4/INT8/UINT8 constant weight) -> MatMul [-> Add] [-> Relu]
// becomes one qtune::MatMulNBits on the native low-bit GEMV (lowbit_matmul_fusion.cc):
// blocked along K (32, 64, 128, and a block that leaves a partial last one), per output
// channel and per tensor, with and without zero points, 1 and 3 rows. Each model is run by
// the reference executor (no fusion: the reference DequantizeLinear and MatMul, the
// oracle) and by a Session, whose plan must hold the fused node and no DequantizeLinear;
// the int4 models also by ONNX Runtime.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "core/float_convert.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "runtime/fused_run.h"
#include "runtime/kernel_test_util.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

using kernel_testing::RandomTensor;

struct QdqCase {
  DataType type = DataType::kInt4;
  int64_t m = 1, k = 128, n = 96;
  int64_t block = 32;  // 0: per output channel (axis 1); -1: per tensor
  bool zero_point = false;
  bool bias = true, relu = true;
  bool half_scale = false;  // float16 scales, DequantizeLinear -> Cast(float) -> MatMul
};

std::string Describe(const QdqCase& c) {
  return std::string(DataTypeName(c.type)) + " M" + std::to_string(c.m) + " K" +
         std::to_string(c.k) + " N" + std::to_string(c.n) + " block " + std::to_string(c.block) +
         (c.zero_point ? " zp" : "") + (c.bias ? " bias" : "") + (c.relu ? " relu" : "") +
         (c.half_scale ? " fp16 scales" : "");
}

// A tensor of `type` with random codes in its range (4-bit types one element per byte).
Tensor RandomCodes(DataType type, std::vector<int64_t> sizes, std::mt19937& rng) {
  Tensor t = *Tensor::Allocate(type, std::move(sizes));
  const bool is_signed = type == DataType::kInt4 || type == DataType::kInt8;
  const int bits = type == DataType::kInt4 || type == DataType::kUint4 ? 4 : 8;
  const int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = lo + (1 << bits) - 1;
  std::uniform_int_distribution<int> dist(lo, hi);
  auto* bytes = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.num_elements(); ++i) bytes[i] = static_cast<uint8_t>(dist(rng));
  return t;
}

std::unique_ptr<ir::Graph> QdqModel(const QdqCase& c, std::mt19937& rng) {
  ir::GraphBuilder b(21);
  ir::Value* x = b.Input("x", DataType::kFloat32, {c.m, c.k});
  std::vector<int64_t> scale_sizes;
  std::vector<ir::Attribute> attributes;
  if (c.block > 0) {
    scale_sizes = {(c.k + c.block - 1) / c.block, c.n};
    attributes = {ir::Attribute::Int("axis", 0), ir::Attribute::Int("block_size", c.block)};
  } else if (c.block == 0) {
    scale_sizes = {c.n};
    attributes = {ir::Attribute::Int("axis", 1)};
  }
  Tensor scale = RandomTensor(scale_sizes, rng, 0.002f, 0.02f);
  if (c.half_scale) {
    Tensor half = *Tensor::Allocate(DataType::kFloat16, scale_sizes);
    for (int64_t i = 0; i < scale.num_elements(); ++i) {
      static_cast<uint16_t*>(half.raw_data())[i] = FloatToHalf(scale.data<float>()[i]);
    }
    scale = half;
  }
  std::vector<ir::Value*> dq_inputs = {b.Initializer("w_q", RandomCodes(c.type, {c.k, c.n}, rng)),
                                       b.Initializer("w_scale", std::move(scale))};
  if (c.zero_point)
    dq_inputs.push_back(b.Initializer("w_zp", RandomCodes(c.type, scale_sizes, rng)));
  ir::Value* w = b.Op("DequantizeLinear", dq_inputs, attributes);
  if (c.half_scale) w = b.Op("Cast", {w}, {ir::Attribute::Int("to", 1)});
  ir::Value* y = b.Op("MatMul", {x, w});
  if (c.bias) y = b.Op("Add", {y, b.Initializer("bias", RandomTensor({c.n}, rng))});
  if (c.relu) y = b.Op("Relu", {y});
  b.Output(y);
  return b.Build();
}

// The fused Session against the reference executor; returns the inputs used.
NamedTensors ExpectFusedMatchesReference(const ir::Graph& graph, const QdqCase& c,
                                         std::mt19937& rng) {
  NamedTensors inputs = {{"x", RandomTensor({c.m, c.k}, rng)}};
  auto run = RunFusedAndReference(graph, inputs);
  EXPECT_TRUE(run.ok()) << Describe(c) << ": " << run.status().ToString();
  if (!run.ok()) return inputs;
  EXPECT_EQ(run->ops["MatMulNBits"], 1) << Describe(c) << "\n" << run->plan;
  EXPECT_EQ(run->ops.count("DequantizeLinear") + run->ops.count("Cast"), 0u) << Describe(c) << "\n"
                                                                             << run->plan;
  EXPECT_EQ(run->ops.count("Relu") + run->ops.count("Add"), 0u) << Describe(c) << "\n" << run->plan;
  EXPECT_NE(run->plan.find("lowbit_gemv"), std::string::npos) << run->plan;
  double scale = 0;
  for (float v : run->want[0].second.span<float>()) scale = std::max(scale, std::fabs(double{v}));
  // float16 scales: the graph rounds each weight to float16, the kernel does not.
  const double per_weight = c.half_scale ? 1e-3 : 1e-5;
  EXPECT_LE(qtune::testing::MaxAbsDiff(run->got[0].second, run->want[0].second),
            per_weight * (1 + scale) * std::sqrt(static_cast<double>(c.k)))
      << Describe(c);
  return inputs;
}

TEST(LowBitFusion, DequantizeMatMulBecomesTheNativeKernel) {
  std::mt19937 rng(2711);
  int cases = 0;
  for (DataType type : {DataType::kInt4, DataType::kUint4, DataType::kInt8, DataType::kUint8}) {
    for (int64_t block : {32, 64, 128, 48}) {  // 48: K = 128 leaves a partial block of 32
      for (int64_t m : {1, 3}) {
        QdqCase c;
        c.type = type;
        c.block = block;
        c.m = m;
        c.zero_point = (cases % 2) == 1;
        c.bias = block != 64;
        c.relu = m == 1;
        ExpectFusedMatchesReference(*QdqModel(c, rng), c, rng);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 32);
}

TEST(LowBitFusion, PerChannelAndPerTensorInt8) {
  std::mt19937 rng(2712);
  for (DataType type : {DataType::kInt8, DataType::kUint8, DataType::kInt4}) {
    for (int64_t block : {0, -1}) {
      QdqCase c;
      c.type = type;
      c.block = block;
      c.k = 100;  // one block of K: any K (even for 4 bits)
      c.n = 33;
      c.zero_point = type == DataType::kUint8;
      ExpectFusedMatchesReference(*QdqModel(c, rng), c, rng);
    }
  }
}

TEST(LowBitFusion, Float16ScalesThroughACast) {
  std::mt19937 rng(2714);
  for (DataType type : {DataType::kInt4, DataType::kUint4, DataType::kInt8}) {
    for (int64_t m : {1, 3}) {
      QdqCase c;
      c.type = type;
      c.m = m;
      c.block = type == DataType::kInt8 ? 0 : 64;
      c.zero_point = type == DataType::kUint4;
      c.half_scale = true;
      ExpectFusedMatchesReference(*QdqModel(c, rng), c, rng);
    }
  }
}

TEST(LowBitFusion, Int4QdqMatchesOnnxRuntime) {
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  namespace fs = std::filesystem;
  std::mt19937 rng(2713);
  for (DataType type : {DataType::kInt4, DataType::kUint4}) {
    for (int64_t block : {32, 128}) {
      QdqCase c;
      c.type = type;
      c.block = block;
      c.k = 256;
      c.n = 130;
      c.zero_point = type == DataType::kUint4;
      std::unique_ptr<ir::Graph> g = QdqModel(c, rng);
      NamedTensors inputs = ExpectFusedMatchesReference(*g, c, rng);
      const fs::path path =
          fs::temp_directory_path() / ("qtune_lowbit_qdq_" + std::to_string(getpid()) + ".onnx");
      ASSERT_TRUE(ir::SaveModel(*g, path.string()).ok());
      auto session = Session::Create(*g, SessionOptions{});
      ASSERT_TRUE(session.ok()) << session.status().ToString();
      auto ours = (*session)->Run(inputs);
      ASSERT_TRUE(ours.ok()) << ours.status().ToString();
      // ONNX Runtime unoptimized runs DequantizeLinear then MatMul in fp32: the same
      // product up to summation order. Optimized, its result is a few 1e-3 off (relative
      // L2), the size of an int8 rounding of the activations: agreement within 1 %.
      for (const char* level : {"disabled", "all"}) {
        setenv("QTUNE_ORT_OPT_LEVEL", level, 1);
        auto ort = qtune::testing::RunOrt(path.string(), inputs, {g->outputs()[0]->name()});
        unsetenv("QTUNE_ORT_OPT_LEVEL");
        ASSERT_TRUE(ort.ok()) << Describe(c) << ": " << ort.status().ToString();
        const Tensor& want = (*ort)[0].second;
        double scale = 0;
        for (float v : want.span<float>()) scale = std::max(scale, std::fabs(double{v}));
        const double rel = qtune::testing::RelativeL2((*ours)[0].second, want);
        if (std::string(level) == "disabled") {
          EXPECT_LE(qtune::testing::MaxAbsDiff((*ours)[0].second, want), 1e-4 * (1 + scale))
              << Describe(c) << " vs ORT " << level;
        } else {
          EXPECT_LE(rel, 1e-2) << Describe(c) << " vs ORT " << level;
        }
        std::printf("%s vs ORT (optimizations %s): rel. L2 %.2e\n", Describe(c).c_str(), level,
                    rel);
      }
      fs::remove(path);
    }
  }
}

}  // namespace
}  // namespace qtune::runtime
