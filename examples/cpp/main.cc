// Uses the installed qtune: loads an ONNX model, runs it once on zeros and prints
// "<output name> <dtype> [d0,d1,...]" per output. Usage: consumer MODEL.onnx
#include <cstdio>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  auto model = qtune::ir::LoadModel(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  auto session = qtune::runtime::Session::Create(**model, {});
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
    return 1;
  }
  qtune::runtime::NamedTensors inputs;
  for (const qtune::ir::Value* input : (*model)->inputs()) {
    std::vector<int64_t> sizes;
    // Unknown or symbolic dimensions (a batch) run as 1.
    if (input->type().shape)
      for (const qtune::Dim& d : input->type().shape->dims())
        sizes.push_back(d.is_known() ? d.value : 1);
    auto tensor = qtune::Tensor::Allocate(input->dtype(), sizes);
    if (!tensor.ok()) {
      std::fprintf(stderr, "%s\n", tensor.status().ToString().c_str());
      return 1;
    }
    inputs.emplace_back(input->name(), std::move(*tensor));
  }
  auto outputs = (*session)->Run(inputs);
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s\n", outputs.status().ToString().c_str());
    return 1;
  }
  for (const auto& [name, tensor] : *outputs) {
    std::string dims;
    for (int64_t d : tensor.sizes()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    std::printf("%s %s [%s]\n", name.c_str(),
                std::string(qtune::DataTypeName(tensor.dtype())).c_str(), dims.c_str());
  }
  return 0;
}
