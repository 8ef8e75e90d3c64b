#include "runtime/kernels/onednn_band_product.h"

#include <algorithm>

#include "runtime/kernels/onednn_context.h"

namespace qtune::runtime::onednn {

void BandProduct::Execute(ExecArgs& args, bool use_serial, const void* src_data, void* dst_data,
                          void* scratchpad_data, const dnnl::memory& weights,
                          const std::optional<dnnl::memory>& bias) const {
  args.Bind(DNNL_ARG_SRC, src, src_data);
  args.Set(DNNL_ARG_WEIGHTS, weights);
  if (bias) args.Set(DNNL_ARG_BIAS, *bias);
  args.Bind(DNNL_ARG_DST, dst, dst_data);
  args.Bind(DNNL_ARG_SCRATCHPAD, use_serial ? serial_scratchpad : scratchpad, scratchpad_data);
  args.Execute(use_serial ? serial : primitive);
}

std::optional<BandProduct> MakeBandProduct(
    int threads, const std::function<dnnl::matmul::primitive_desc()>& describe) {
  dnnl::matmul::primitive_desc own = describe();
  dnnl::matmul::primitive_desc serial = [&] {
    struct RestoreThreads {
      int threads;
      ~RestoreThreads() { SetThreads(threads); }
    } restore{threads};
    SetThreads(1);
    return describe();
  }();
  for (const dnnl::matmul::primitive_desc* d : {&own, &serial}) {
    if (IsReferenceImpl(ImplName(*d))) return std::nullopt;
  }
  return BandProduct{dnnl::matmul(own), dnnl::matmul(serial),  own.src_desc(),
                     own.dst_desc(),    own.scratchpad_desc(), serial.scratchpad_desc()};
}

size_t BandScratchpadBytes(std::initializer_list<const BandProduct*> products) {
  size_t bytes = 0;
  for (const BandProduct* p : products) {
    if (p != nullptr) {
      bytes = std::max({bytes, p->scratchpad.get_size(), p->serial_scratchpad.get_size()});
    }
  }
  return bytes;
}

}  // namespace qtune::runtime::onednn
