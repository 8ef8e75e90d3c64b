// Small helpers shared by the seed-corpus writers (make_corpus.cc, make_corpus_ops.cc).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"

namespace qtune::corpus {

// Deterministic float32 values start, start + 0.25, ... (period 7).
inline Tensor Floats(std::vector<int64_t> sizes, float start) {
  std::vector<float> v(static_cast<size_t>(NumElements(sizes)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + 0.25f * static_cast<float>(i % 7);
  return Tensor::FromVector<float>(std::move(sizes), v);
}

inline Tensor Ints(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<int64_t>({n}, values);
}

// Builds the graph and writes it to DIR/model/NAME.onnx (errors are printed).
inline void Save(ir::GraphBuilder& b, const std::string& dir, const std::string& name) {
  auto graph = b.Build();
  Status status = ir::SaveModel(*graph, dir + "/model/" + name + ".onnx");
  if (!status.ok()) std::fprintf(stderr, "%s: %s\n", name.c_str(), status.ToString().c_str());
}

}  // namespace qtune::corpus
