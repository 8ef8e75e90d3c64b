#include "util/test_models.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/check.h"
#include "ir/onnx_io.h"
#include "ir/resnet.h"

namespace qtune::testing {
namespace {

std::string* written_resnet18 = nullptr;

void RemoveWrittenModels() {
  if (written_resnet18 == nullptr) return;
  std::error_code ignored;
  std::filesystem::remove(*written_resnet18, ignored);
}

}  // namespace

std::unique_ptr<ir::Graph> BuildTestResNet18() {
  ir::ResNet18Options options;
  options.seed = kResNet18Seed;
  return ir::BuildResNet18(options);
}

const std::string& ResNet18File() {
  static const std::string* path = [] {
    auto* p = new std::string((std::filesystem::temp_directory_path() /
                               ("qtune_test_resnet18_" + std::to_string(::getpid()) + ".onnx"))
                                  .string());
    Status status = ir::SaveModel(*BuildTestResNet18(), *p);
    QTUNE_CHECK(status.ok());
    std::printf("built resnet18 (seed %llu) at %s\n",
                static_cast<unsigned long long>(kResNet18Seed), p->c_str());
    written_resnet18 = p;
    std::atexit(&RemoveWrittenModels);
    return p;
  }();
  return *path;
}

}  // namespace qtune::testing
