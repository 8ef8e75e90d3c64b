// Uses the installed qtune through its public API only (<qtune/qtune.h>, docs/cmake.md):
// opens an ONNX model, runs it once on zeros and prints "<output name> <dtype> [d0,d1,...]"
// per output. With a `qtune tune` checkpoint it first prints what the checkpoint holds
// ("checkpoint <candidate> x<threads>, <n> weights fingerprinted") and runs the model as
// the checkpoint configures it.
// Usage: consumer MODEL.onnx [MODEL.qtc]
#include <qtune/qtune.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

int Fail(const qtune::Status& status) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return 1;
}

// The model alone, or as `checkpoint` configures it (after printing what it holds).
qtune::StatusOr<std::unique_ptr<qtune::Session>> OpenSession(const char* model,
                                                             const char* checkpoint) {
  if (checkpoint == nullptr) return qtune::Session::Open(model);
  auto info = qtune::ReadCheckpoint(checkpoint);
  if (!info.ok()) return info.status();
  std::printf("checkpoint %s x%d, %lld weights fingerprinted\n", info->candidate.c_str(),
              info->threads, static_cast<long long>(info->weights_fingerprinted));
  return qtune::LoadTuned(model, checkpoint);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [MODEL.qtc]\n", argv[0]);
    return 2;
  }
  auto session = OpenSession(argv[1], argc == 3 ? argv[2] : nullptr);
  if (!session.ok()) return Fail(session.status());

  qtune::NamedTensors inputs;
  for (const qtune::TensorInfo& input : (*session)->inputs()) {
    std::vector<int64_t> sizes;
    for (int64_t d : input.dims) sizes.push_back(d >= 0 ? d : 1);  // an open batch axis runs as 1
    auto tensor = qtune::Tensor::Allocate(input.dtype, sizes);
    if (!tensor.ok()) return Fail(tensor.status());
    inputs.emplace_back(input.name, std::move(*tensor));
  }
  auto outputs = (*session)->Run(inputs);
  if (!outputs.ok()) return Fail(outputs.status());
  for (const auto& [name, tensor] : *outputs) {
    std::string dims;
    for (int64_t d : tensor.sizes()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    std::printf("%s %s [%s]\n", name.c_str(),
                std::string(qtune::DataTypeName(tensor.dtype())).c_str(), dims.c_str());
  }
  return 0;
}
