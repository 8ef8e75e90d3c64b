// Per-run overhead: Session::Run allocates nothing per planned buffer or per step. This
// binary replaces the global operator new (process-wide, so oneDNN's C++ allocations count
// too) and counts the calls a warm Run makes. What remains per run is the caller's own:
// one buffer per graph output and the returned list of outputs. oneDNN's execute() makes
// a few small allocations of its own per primitive (its argument maps); they are counted
// apart (by the caller's address) and printed, not limited: they are not ours to remove.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ir/onnx_io.h"
#include "quant/quantize_model.h"
#include "runtime/session.h"
#include "util/test_models.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};         // made by qtune's code (and the C++ library for it)
std::atomic<int64_t> g_onednn_allocations{0};  // made inside oneDNN's execute()

// True when `address` (a caller of operator new) lies in oneDNN's shared library.
bool InOnednn(void* address) {
  Dl_info info;
  return dladdr(address, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libdnnl") != nullptr;
}

thread_local bool t_classifying = false;  // dladdr's own allocations are not counted

void* CountedAlloc(std::size_t size, std::size_t align, void* caller) {
  if (g_counting.load(std::memory_order_relaxed) && !t_classifying) {
    t_classifying = true;
    (InOnednn(caller) ? g_onednn_allocations : g_allocations).fetch_add(1);
    t_classifying = false;
  }
  if (size == 0) size = 1;
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (size + align - 1) / align * align)
                : std::malloc(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t size) { return CountedAlloc(size, 0, __builtin_return_address(0)); }
void* operator new[](std::size_t size) {
  return CountedAlloc(size, 0, __builtin_return_address(0));
}
void* operator new(std::size_t size, std::align_val_t align) {
  return CountedAlloc(size, static_cast<std::size_t>(align), __builtin_return_address(0));
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return CountedAlloc(size, static_cast<std::size_t>(align), __builtin_return_address(0));
}
// The nothrow forms too: libstdc++'s call the replaced forms above, but under ASan they
// would be ASan's own, and memory from them freed here is an alloc-dealloc mismatch.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size, 0, __builtin_return_address(0));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size, 0, __builtin_return_address(0));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size, static_cast<std::size_t>(align), __builtin_return_address(0));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return CountedAlloc(size, static_cast<std::size_t>(align), __builtin_return_address(0));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace qtune::runtime {
namespace {

Tensor Filled(const std::vector<int64_t>& sizes) {
  Tensor t = *Tensor::Allocate(DataType::kFloat32, sizes);
  float v = 0.0f;
  for (float& x : t.span<float>()) x = (v += 0.37f) > 1.0f ? (v -= 2.0f) : v;
  return t;
}

// Operator-new calls of one warm Run (the median of 5, after 3 warm-up runs).
int64_t AllocationsPerRun(const ir::Graph& graph, const std::vector<int64_t>& sizes,
                          NamedTensors* outputs_out = nullptr) {
  auto session = Session::Create(graph, SessionOptions{});
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return -1;
  NamedTensors inputs = {{graph.inputs()[0]->name(), Filled(sizes)}};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE((*session)->Run(inputs).ok());
  std::vector<int64_t> counts;
  for (int i = 0; i < 5; ++i) {
    g_allocations = 0;
    g_onednn_allocations = 0;
    g_counting = true;
    auto out = (*session)->Run(inputs);
    g_counting = false;
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    counts.push_back(g_allocations.load());
    if (i == 0) {
      std::printf("  (inside oneDNN's execute: %lld)\n",
                  static_cast<long long>(g_onednn_allocations.load()));
    }
    if (outputs_out != nullptr && out.ok()) *outputs_out = std::move(out).value();
  }
  std::sort(counts.begin(), counts.end());
  return counts[counts.size() / 2];
}

// What a warm run of a one-output model may allocate on qtune's side: the output's buffer,
// its sizes and its shared ownership, and the list of outputs returned.
constexpr int64_t kPerRunLimit = 4;

TEST(RunAllocationsTest, FmnistFp32AllocatesOnlyItsOutput) {
  auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const int64_t n = AllocationsPerRun(**graph, {1, 1, 28, 28});
  std::printf("fmnist fp32: %lld allocations per run\n", static_cast<long long>(n));
  EXPECT_LE(n, kPerRunLimit);
}

TEST(RunAllocationsTest, FmnistInt8AllocatesOnlyItsOutput) {
  auto model = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  quant::QuantizeModelOptions options;
  options.calib_specs = {std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy"};
  options.show_progress = false;
  auto q = quant::QuantizeModel(**model, options);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  const int64_t n = AllocationsPerRun(*q->quantized, {1, 1, 28, 28});
  std::printf("fmnist int8: %lld allocations per run\n", static_cast<long long>(n));
  EXPECT_LE(n, kPerRunLimit);
}

TEST(RunAllocationsTest, ResNet18AllocatesOnlyItsOutput) {
  std::unique_ptr<ir::Graph> graph = testing::BuildTestResNet18();
  const int64_t n = AllocationsPerRun(*graph, {1, 3, 224, 224});
  std::printf("resnet18 fp32: %lld allocations per run\n", static_cast<long long>(n));
  EXPECT_LE(n, kPerRunLimit);
}

// The binding is re-pointed at every run: new input buffers, other batch sizes and back
// give exactly what a fresh session gives.
TEST(RunAllocationsTest, RebindingFollowsNewBuffersAndSizes) {
  auto graph = ir::LoadModel(std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto warm = Session::Create(**graph, SessionOptions{});
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  const std::string name = (*graph)->inputs()[0]->name();
  for (int64_t batch : {1, 3, 1, 2, 3}) {
    NamedTensors inputs = {{name, Filled({batch, 1, 28, 28})}};
    float* x = inputs[0].second.data<float>();
    x[0] = static_cast<float>(batch);  // each round's input differs
    auto fresh = Session::Create(**graph, SessionOptions{});
    ASSERT_TRUE(fresh.ok());
    auto expected = (*fresh)->Run(inputs);
    auto got = (*warm)->Run(inputs);
    ASSERT_TRUE(expected.ok() && got.ok());
    ASSERT_EQ(got->size(), expected->size());
    const Tensor& a = (*got)[0].second;
    const Tensor& b = (*expected)[0].second;
    ASSERT_EQ(a.sizes(), b.sizes()) << "batch " << batch;
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()), 0) << "batch " << batch;
  }
}

}  // namespace
}  // namespace qtune::runtime
