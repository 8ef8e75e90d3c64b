// Matrix products over bands of rows that a kernel lays out itself (a 1-D convolution's
// unfolded frames, Winograd's transformed tiles), shared by onednn_conv1d_matmul.cc and
// onednn_winograd_conv.cc: one oneDNN matmul made for the session's threads and one made
// for a single thread, both running on the caller's scratchpad, and the split of the bands
// over threads.
#pragma once

#include <omp.h>

#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <vector>

#include "core/status.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime::onednn {

// The product of one band size. `serial` is made for one thread: each thread runs it when
// the bands run in parallel. Both take their scratchpad from the caller
// (scratchpad_mode::user), so that threads running the same primitive at once do not share
// oneDNN's.
struct BandProduct {
  dnnl::matmul primitive, serial;
  dnnl::memory::desc src, dst, scratchpad, serial_scratchpad;

  // src -> dst on `weights` (+ `bias`), with the serial primitive when `serial`. Throws
  // dnnl::error.
  void Execute(ExecArgs& args, bool use_serial, const void* src_data, void* dst_data,
               void* scratchpad_data, const dnnl::memory& weights,
               const std::optional<dnnl::memory>& bias) const;
};

// The product `describe()` gives, called once with `threads` set and once with 1 (the
// session's count is restored after), or nullopt when oneDNN offers only its reference
// implementation. `describe` must ask for scratchpad_mode::user. Throws dnnl::error.
std::optional<BandProduct> MakeBandProduct(
    int threads, const std::function<dnnl::matmul::primitive_desc()>& describe);

// The largest scratchpad either primitive of `products` (null entries skipped) needs.
size_t BandScratchpadBytes(std::initializer_list<const BandProduct*> products);

// Runs fn(band, worker, threads) -> Status for bands 0 .. count-1. With `threads` > 1 and at
// least as many bands, workers 0 .. threads-1 run whole bands at once, each with threads = 1
// (the serial products, the worker's own scratch); otherwise the bands run in turn on
// worker 0 with all threads. The first error is returned. A template, not std::function:
// a warm run allocates nothing on one thread (run_allocations_test).
template <typename Fn>
Status RunBands(int64_t count, int threads, const Fn& fn) {
  if (threads <= 1 || count < threads) {
    for (int64_t band = 0; band < count; ++band) RETURN_IF_ERROR(fn(band, 0, threads));
    return Status::Ok();
  }
  std::vector<Status> failures(static_cast<size_t>(threads));
#pragma omp parallel for num_threads(threads) schedule(dynamic)
  for (int64_t band = 0; band < count; ++band) {
    const int worker = omp_get_thread_num();
    Status status = fn(band, worker, /*threads=*/1);
    if (!status.ok() && failures[worker].ok()) failures[worker] = std::move(status);
  }
  for (Status& status : failures) RETURN_IF_ERROR(status);
  return Status::Ok();
}

}  // namespace qtune::runtime::onednn
