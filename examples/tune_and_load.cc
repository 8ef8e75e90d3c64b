// Deploying a `qtune tune` checkpoint from C++: load the model (the weights), load the
// checkpoint onto it (verified, weights checked, configuration rebuilt and warmed up), run.
//
//   build-tune2/examples/tune_and_load models/fmnist/fmnist_resnet.onnx fmnist.qtc
//
// (after `qtune tune models/fmnist/fmnist_resnet.onnx --calib models/fmnist/calib_512.npy
//  -o fmnist.qtc`). docs/tune.md describes the API.
#include <cstdio>

#include "core/tensor.h"
#include "ir/onnx_io.h"
#include "tune/tune.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx MODEL.qtc\n", argv[0]);
    return 2;
  }
  using namespace qtune;
  // The three lines of a deployment:
  auto model = ir::LoadModel(argv[1]);
  if (!model.ok()) return std::fprintf(stderr, "%s\n", model.status().ToString().c_str()), 3;
  auto tuned = tune::LoadTunedSession(**model, argv[2], tune::LoadTunedOptions{});
  if (!tuned.ok()) return std::fprintf(stderr, "%s\n", tuned.status().ToString().c_str()), 3;

  // Run once on zeros of the sizes the checkpoint was tuned for.
  runtime::NamedTensors inputs;
  for (const ir::Value* input : tuned->session->graph().inputs()) {
    auto t = Tensor::Allocate(input->dtype(), tuned->input_sizes.at(input->name()));
    if (!t.ok()) return 1;
    inputs.emplace_back(input->name(), std::move(t).value());
  }
  auto outputs = tuned->session->Run(inputs);
  if (!outputs.ok()) return std::fprintf(stderr, "%s\n", outputs.status().ToString().c_str()), 1;
  std::printf("%s with %d thread(s)%s: %zu output(s)\n", tuned->candidate.c_str(), tuned->threads,
              tuned->reused_cache ? " (cached unpack)" : "", outputs->size());
  for (const auto& [name, t] : *outputs)
    std::printf("  %s %s\n", name.c_str(), t.DebugString().c_str());
  return 0;
}
