// qtune/session.h: run an ONNX model (float or QDQ) on qtune's CPU engine
// (docs/cmake.md, "The C++ API"). What `qtune run` and Python's qtune.Session do.
//
//   auto session = qtune::Session::Open("model.onnx", {.threads = 4});
//   if (!session.ok()) ...;                       // session.status().message() says why
//   qtune::NamedTensors inputs = {{"x", qtune::Tensor::Borrow(
//       qtune::DataType::kFloat32, {1, 3, 224, 224}, pixels)}};
//   auto outputs = (*session)->Run(inputs);        // outputs in the model's output order
//
// Contract:
//   - Open() loads the model, cleans a private copy (constant folding, BN folding, ...) and
//     keeps it; the file is not read again. Plans are compiled on the first Run() for each
//     set of input sizes and reused after.
//   - Run() may be called from several threads; calls on one Session are serialized. Two
//     Sessions run in parallel.
//   - Input tensors are borrowed for the duration of Run() only; outputs are owned by the
//     caller.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "status.h"
#include "tensor.h"

namespace qtune {

// Tensors by name: a model's inputs for Run(), and its outputs.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// How many of `threads` a run uses (docs/run.md, "Threads").
enum class ThreadPolicy {
  kAdaptive,  // fewer while other processes keep cores busy (at least 1)
  kFixed,     // always `threads` (reproducible timings)
};

struct SessionOptions {
  int threads = 1;         // intra-op threads of this session
  bool use_onednn = true;  // false: qtune's plain reference kernels only (slow, exact)
  bool optimize = true;    // false: run the graph as written (no passes, no fusions)
  ThreadPolicy thread_policy = ThreadPolicy::kAdaptive;
};

// A model input or output as the model declares it.
struct TensorInfo {
  std::string name;
  DataType dtype = DataType::kFloat32;
  // One entry per axis: its size, or -1 where the model leaves it open (a batch axis).
  // Empty with has_shape == false when the model declares no shape at all.
  std::vector<int64_t> dims;
  bool has_shape = false;
};

// Bench(): untimed warm-up runs, then timed ones.
struct BenchOptions {
  int warmup = 5;  // >= 0
  int iters = 50;  // >= 1
};

// What Bench() measured: host wall time around each Run() call, in milliseconds.
struct LatencyStats {
  double median_ms = 0;  // the upper middle value for an even count (as `qtune bench`)
  double p90_ms = 0;
  double min_ms = 0;
  std::vector<double> times_ms;  // every timed run, in run order
};

namespace api_internal {
struct SessionImpl;  // the engine's session; see src/api/
}  // namespace api_internal

class Session {
 public:
  // Loads `model_path` (.onnx; external data beside it is found). Errors: NotFound, an
  // InvalidArgument or Unimplemented naming the node the engine cannot run.
  static StatusOr<std::unique_ptr<Session>> Open(const std::string& model_path,
                                                 const SessionOptions& options = {});
  // The same from the model's serialized bytes (no external data).
  static StatusOr<std::unique_ptr<Session>> OpenBytes(std::string_view onnx_bytes,
                                                      const SessionOptions& options = {});

  explicit Session(std::unique_ptr<api_internal::SessionImpl> impl);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Inputs by name: every model input, any order. Outputs in the model's order. Errors
  // (InvalidArgument) name the input whose name, data type or rank is wrong.
  StatusOr<NamedTensors> Run(const NamedTensors& inputs);

  // Times Run() on `inputs` with `qtune bench`'s loop. One extra untimed run comes first
  // (it checks the inputs and compiles the plan), so no timed run includes compiling.
  // Errors: Run()'s, or InvalidArgument for warmup < 0 or iters < 1.
  StatusOr<LatencyStats> Bench(const NamedTensors& inputs, const BenchOptions& options = {});

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const SessionOptions& options() const;

 private:
  std::unique_ptr<api_internal::SessionImpl> impl_;
};

}  // namespace qtune
