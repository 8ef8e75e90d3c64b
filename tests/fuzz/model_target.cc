// Fuzz target for the model path beyond the loader: the bytes are parsed as an ONNX model
// (ir/onnx_io.h); a model that loads becomes a runtime::Session that compiles a plan and
// runs once on small deterministic inputs. Size caps keep legitimate-but-huge models from
// reading as hangs: at most kMaxNodes nodes, kMaxInputElements elements per input
// (symbolic and unknown dims are taken as 1), kMaxPlanBytes of arena and outputs.
// Every Status error is a normal outcome.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "fuzz/fuzz_target.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"

namespace qtune::fuzz {

const char* const kTargetName = "model";

namespace {

constexpr size_t kMaxNodes = 500;
constexpr int64_t kMaxInputElements = 1'000'000;
constexpr int64_t kMaxPlanBytes = int64_t{256} << 20;
constexpr int64_t kMaxTensorBytesLoaded = int64_t{64} << 20;

// QTUNE_FUZZ_DEBUG=1 prints why each input stopped where it did.
const bool g_debug = std::getenv("QTUNE_FUZZ_DEBUG") != nullptr;

void Stopped(const char* stage, const Status& status) {
  if (g_debug) std::fprintf(stderr, "model target: %s: %s\n", stage, status.ToString().c_str());
}

int64_t g_inputs = 0, g_loaded = 0, g_created = 0, g_planned = 0, g_staged = 0, g_ran = 0;

// Fills `tensor` with small values from `seed`: floats in [-2, 2), integers in {0, 1, 2}
// (valid indices and axes for most ops), booleans; other types stay zero.
void Fill(Tensor& tensor, uint64_t seed) {
  uint64_t state = seed | 1;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int64_t n = tensor.num_elements();
  switch (tensor.dtype()) {
    case DataType::kFloat32:
      for (int64_t i = 0; i < n; ++i) {
        tensor.data<float>()[i] = static_cast<float>(next() % 4096) / 1024.0f - 2.0f;
      }
      break;
    case DataType::kInt64:
      for (int64_t i = 0; i < n; ++i) tensor.data<int64_t>()[i] = static_cast<int64_t>(next() % 3);
      break;
    case DataType::kInt32:
      for (int64_t i = 0; i < n; ++i) tensor.data<int32_t>()[i] = static_cast<int32_t>(next() % 3);
      break;
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kBool:
      for (int64_t i = 0; i < n; ++i) {
        static_cast<uint8_t*>(tensor.raw_data())[i] = static_cast<uint8_t>(next() % 2);
      }
      break;
    default:
      break;
  }
}

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  ++g_inputs;
  ir::LoadOptions load_options;
  load_options.max_total_tensor_bytes = kMaxTensorBytesLoaded;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto graph = ir::ParseModel(bytes, "fuzz.onnx", load_options);
  if (!graph.ok()) {
    Stopped("load", graph.status());
    return 0;
  }
  ++g_loaded;
  if ((*graph)->num_nodes() > kMaxNodes) return 0;

  std::map<std::string, std::vector<int64_t>> input_sizes;
  runtime::NamedTensors inputs;
  uint64_t seed = 0x9e3779b97f4a7c15ull ^ size;
  for (size_t i = 0; i < size; i += 61) seed = seed * 31 + data[i];
  for (const ir::Value* input : (*graph)->inputs()) {
    const ir::TensorType& type = input->type();
    if (!type.shape.has_value() || type.shape->rank() > 8) return 0;
    std::vector<int64_t> sizes;
    for (const Dim& dim : type.shape->dims()) sizes.push_back(dim.is_known() ? dim.value : 1);
    int64_t n = NumElements(sizes);
    if (n < 0 || n > kMaxInputElements) return 0;
    auto tensor = Tensor::Allocate(type.dtype, sizes);
    if (!tensor.ok()) return 0;
    Fill(*tensor, seed + inputs.size());
    input_sizes[input->name()] = sizes;
    inputs.emplace_back(input->name(), std::move(tensor).value());
  }

  runtime::SessionOptions options;
  options.threads = 1;
  options.use_onednn = (seed % 4) != 0;  // a quarter of the models on the reference tier
  auto session = runtime::Session::Create(**graph, options);
  if (!session.ok()) {
    Stopped("session", session.status());
    return 0;
  }
  ++g_created;
  auto plan = (*session)->Prepare(input_sizes);
  if (plan.ok()) {
    ++g_planned;
    int64_t plan_bytes = (*plan)->arena_bytes;
    for (int id : (*plan)->output_ids) {
      if (id >= 0) plan_bytes += (*plan)->values[static_cast<size_t>(id)].byte_size();
    }
    if (plan_bytes > kMaxPlanBytes) return 0;
  } else if (plan.status().code() == StatusCode::kFailedPrecondition) {
    // Sizes that depend on run-time values: the session compiles its stages while it
    // runs (runtime/dynamic/graph_runner.h), so there is no plan to size beforehand.
    ++g_staged;
  } else {
    Stopped("plan", plan.status());
    return 0;
  }
  auto outputs = (*session)->Run(inputs);
  if (outputs.ok()) {
    ++g_ran;
  } else {
    Stopped("run", outputs.status());
  }
  return 0;
}

void PrintTargetStats() {
  std::fprintf(stderr,
               "model target: %lld inputs, %lld loaded, %lld sessions, %lld planned, %lld staged "
               "(sizes known only while running), %lld ran\n",
               static_cast<long long>(g_inputs), static_cast<long long>(g_loaded),
               static_cast<long long>(g_created), static_cast<long long>(g_planned),
               static_cast<long long>(g_staged), static_cast<long long>(g_ran));
}

}  // namespace qtune::fuzz
