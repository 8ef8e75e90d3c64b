// qtune_make_model: writes an architecture built with qtune's graph builder (random,
// seeded weights) to an .onnx file, for benchmark scripts and tests that must run on a
// clone of the repository alone.
//
//   qtune_make_model resnet18 OUT.onnx [--seed N] [--batch N] [--overwrite]
//   qtune_make_model matmul_stack OUT.onnx [--layers N] [--width N] [--seed N] [--batch N]
//   qtune_make_model int4_stack|nbits_stack|int8_stack OUT.onnx [the same] [--block N]
//
// Exit codes follow the qtune CLI's (docs/cli.md): 0 success, 1 write failure, 2 bad
// command line. An existing OUT is refused unless --overwrite is given.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/matmul_stack.h"
#include "ir/onnx_io.h"
#include "ir/resnet.h"
#include "lowbit_stack.h"

namespace {

constexpr char kUsage[] =
    "usage: qtune_make_model MODEL OUT.onnx [--seed N] [--batch N] [--overwrite]\n"
    "  resnet18   torchvision ResNet-18 (opset 13, input \"input\" f32 [N,3,224,224],\n"
    "             output \"logits\"), He-initialized random weights\n"
    "  matmul_stack  --layers N x (MatMul [W,W] + bias Add + Relu), input \"x\" f32\n"
    "             [batch, W], output \"y\" (the batch-1 MatMul benchmark; default 4\n"
    "             layers, --width 2048, batch 1)\n"
    "  int4_stack    matmul_stack with int4 weights (RTN, symmetric, --block N rows of\n"
    "             K per scale, default 32) as DequantizeLinear(block_size) -> MatMul\n"
    "             (opset 21)\n"
    "  nbits_stack   the same weights as com.microsoft MatMulNBits (ONNX Runtime's form)\n"
    "  int8_stack    matmul_stack with int8 weights, one scale per output channel\n"
    "             (DequantizeLinear axis 1 -> MatMul, opset 21)\n"
    "  --seed N   weight seed (default 1)\n"
    "  --batch N  fixed batch size (resnet18 default: the symbolic dimension \"N\";\n"
    "             matmul_stack default 1, 0 for symbolic)\n"
    "  --overwrite  replace OUT if it exists\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "qtune_make_model: error: %s\n%s", message.c_str(), kUsage);
  return 2;
}

bool ParseInt(const std::string& text, int64_t* value) {
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0) return false;
  *value = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  qtune::ir::ResNet18Options options;
  qtune::ir::MatMulStackOptions stack;
  bool overwrite = false;
  int64_t block = 32;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--overwrite") {
      overwrite = true;
    } else if (arg == "--seed" || arg == "--batch" || arg == "--layers" || arg == "--width" ||
               arg == "--block") {
      int64_t value = 0;
      if (i + 1 >= argc || !ParseInt(argv[i + 1], &value)) {
        return Usage(arg + " needs a non-negative integer");
      }
      ++i;
      if (arg == "--seed") options.seed = stack.seed = static_cast<uint64_t>(value);
      if (arg == "--batch") options.batch = stack.batch = value;
      if (arg == "--layers") stack.layers = value;
      if (arg == "--width") stack.width = value;
      if (arg == "--block") block = value;
    } else if (arg.rfind("--", 0) == 0) {
      return Usage("unknown flag " + arg);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) return Usage("expected a model name and an output path");
  const std::string& model = positional[0];
  const bool lowbit = model == "int4_stack" || model == "nbits_stack" || model == "int8_stack";
  if (model != "resnet18" && model != "matmul_stack" && !lowbit) {
    return Usage("unknown model '" + model + "'");
  }
  if (stack.layers < 1 || stack.width < 1) return Usage("--layers and --width must be >= 1");
  if (lowbit && (block < 2 || block % 2 != 0 || stack.width % block != 0)) {
    return Usage("--block must be even and divide --width");
  }
  const std::string& out = positional[1];
  std::error_code ec;
  if (!overwrite && std::filesystem::exists(out, ec)) {
    return Usage(out + " exists; pass --overwrite to replace it");
  }
  std::unique_ptr<qtune::ir::Graph> graph;
  if (model == "resnet18") {
    graph = qtune::ir::BuildResNet18(options);
  } else if (lowbit) {
    const qtune::tools::LowBitForm form = model == "int4_stack" ? qtune::tools::LowBitForm::kQdq
                                          : model == "int8_stack"
                                              ? qtune::tools::LowBitForm::kInt8Qdq
                                              : qtune::tools::LowBitForm::kMatMulNBits;
    graph = qtune::tools::BuildLowBitStack(stack, form, block);
  } else {
    graph = qtune::ir::BuildMatMulStack(stack);
  }
  qtune::Status status = qtune::ir::SaveModel(*graph, out);
  if (!status.ok()) {
    std::fprintf(stderr, "qtune_make_model: error: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s (%s, seed %llu)\n", out.c_str(), model.c_str(),
              static_cast<unsigned long long>(options.seed));
  return 0;
}
