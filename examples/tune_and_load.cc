// Deploying a `qtune tune` checkpoint from C++ with the public API (<qtune/qtune.h>,
// docs/cmake.md "The C++ API"): read what the checkpoint holds, load it onto the model
// (verified, weights checked, configuration rebuilt and warmed up), run.
//
//   build/examples/tune_and_load models/fmnist/fmnist_resnet.onnx fmnist.qtc
//
// (after `qtune tune models/fmnist/fmnist_resnet.onnx --calib models/fmnist/calib_512.npy
//  -o fmnist.qtc`). docs/tune.md describes the checkpoint and its loading.
#include <qtune/qtune.h>

#include <cstdio>
#include <memory>
#include <string>

namespace {

int Fail(const qtune::Status& status, int code) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx MODEL.qtc\n", argv[0]);
    return 2;
  }
  // The configuration it holds (candidate, threads, the input sizes it was tuned for).
  auto info = qtune::ReadCheckpoint(argv[2]);
  if (!info.ok()) return Fail(info.status(), 3);
  // The one line of a deployment: the model's weights with the checkpoint's decisions.
  auto session = qtune::LoadTuned(argv[1], argv[2]);
  if (!session.ok()) return Fail(session.status(), 3);

  // Run once on zeros of the sizes the checkpoint was tuned for.
  qtune::NamedTensors inputs;
  for (const qtune::TensorInfo& input : (*session)->inputs()) {
    auto sizes = info->input_sizes.find(input.name);
    if (sizes == info->input_sizes.end()) {
      std::fprintf(stderr, "%s holds no input sizes for input '%s'\n", argv[2], input.name.c_str());
      return 1;
    }
    auto t = qtune::Tensor::Allocate(input.dtype, sizes->second);
    if (!t.ok()) return Fail(t.status(), 1);
    inputs.emplace_back(input.name, std::move(t).value());
  }
  auto outputs = (*session)->Run(inputs);
  if (!outputs.ok()) return Fail(outputs.status(), 1);
  std::printf("%s with %d thread(s): %zu output(s)\n", info->candidate.c_str(), info->threads,
              outputs->size());
  for (const auto& [name, t] : *outputs)
    std::printf("  %s %s\n", name.c_str(), t.DebugString().c_str());
  return 0;
}
