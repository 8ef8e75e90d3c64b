// libFuzzer entry point for the ONNX loader: any bytes must give a verified graph or a
// clean error, and a graph that loads must save and load again.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ir/onnx_io.h"
#include "ir/verify.h"

namespace {

[[noreturn]] void Fail(const char* what, const qtune::Status& status) {
  std::fprintf(stderr, "onnx_load_fuzzer: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  qtune::ir::LoadOptions options;
  options.max_total_tensor_bytes = int64_t{64} << 20;  // keep within the fuzzer's RSS limit
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto graph = qtune::ir::ParseModel(bytes, "fuzz.onnx", options);
  if (!graph.ok()) {
    if (graph.status().code() == qtune::StatusCode::kInternal) Fail("load", graph.status());
    return 0;
  }
  qtune::Status verified = qtune::ir::Verify(**graph);
  if (!verified.ok()) Fail("verify after load", verified);
  auto saved = qtune::ir::SerializeModel(**graph);
  if (!saved.ok()) Fail("save", saved.status());
  auto again = qtune::ir::ParseModel(*saved, "fuzz-resaved.onnx", options);
  if (!again.ok()) Fail("reload", again.status());
  if ((*again)->num_nodes() != (*graph)->num_nodes()) {
    Fail("reload", qtune::InternalError("node count changed"));
  }
  return 0;
}
