// Seeded random float32 tensors for test inputs: the same seed gives the same values
// (std::mt19937 and the standard distributions), so a test's inputs never change.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/tensor.h"

namespace qtune::testing {

// Values from N(0, 1).
inline Tensor RandomNormalTensor(const std::vector<int64_t>& sizes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

// Values from U(-1, 1).
inline Tensor RandomUniformTensor(const std::vector<int64_t>& sizes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

// Values from U(-scale, scale), drawn from the caller's generator (a sequence of tensors
// from one seed).
inline Tensor UniformTensor(const std::vector<int64_t>& sizes, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

}  // namespace qtune::testing
