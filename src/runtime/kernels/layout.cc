#include "core/check.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {

const char* LayoutName(Layout layout) { return layout == Layout::kNhwc ? "nhwc" : "plain"; }

const char* PrecisionName(Precision precision) {
  return precision == Precision::kBfloat16 ? "bf16" : "fp32";
}

std::vector<int64_t> PhysicalSizes(const std::vector<int64_t>& sizes, Layout layout) {
  if (layout == Layout::kPlain) return sizes;
  QTUNE_CHECK(sizes.size() == 4);
  return {sizes[0], sizes[2], sizes[3], sizes[1]};
}

namespace {

class ReorderKernel : public Kernel {
 public:
  ReorderKernel(dnnl::memory::desc from, dnnl::memory::desc to, Layout to_layout)
      : from_(from),
        to_(to),
        primitive_(dnnl::reorder::primitive_desc(onednn::Engine(), from, onednn::Engine(), to)),
        to_layout_(to_layout) {}

  std::string Describe() const override {
    return std::string("onednn:reorder to ") + LayoutName(to_layout_);
  }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      args_.Bind(DNNL_ARG_FROM, from_, inputs[0].raw_data());
      args_.Bind(DNNL_ARG_TO, to_, outputs[0].raw_data());
      args_.Execute(primitive_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "reorder");
    }
  }

 private:
  dnnl::memory::desc from_, to_;
  dnnl::reorder primitive_;
  Layout to_layout_;
  onednn::ExecArgs args_;
};

// 8-byte values (int64, double) between kPlain and kNhwc: oneDNN 2.6 has no 8-byte type.
class WideReorderKernel : public Kernel {
 public:
  WideReorderKernel(std::vector<int64_t> sizes, Layout to) : sizes_(std::move(sizes)), to_(to) {}
  std::string Describe() const override {
    return std::string("native:reorder to ") + LayoutName(to_);
  }
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const auto* src = static_cast<const uint64_t*>(inputs[0].raw_data());
    auto* dst = static_cast<uint64_t*>(outputs[0].raw_data());
    const int64_t n = sizes_[0], c = sizes_[1], hw = sizes_[2] * sizes_[3];
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        for (int64_t p = 0; p < hw; ++p) {
          const int64_t plain = (b * c + ch) * hw + p, nhwc = (b * hw + p) * c + ch;
          if (to_ == Layout::kNhwc) {
            dst[nhwc] = src[plain];
          } else {
            dst[plain] = src[nhwc];
          }
        }
      }
    }
    return Status::Ok();
  }

 private:
  std::vector<int64_t> sizes_;  // logical [N,C,H,W]
  Layout to_;
};

StatusOr<std::unique_ptr<Kernel>> CreateWideReorderKernel(const std::vector<int64_t>& sizes,
                                                          Layout from, Layout to) {
  if (from == to) return InternalError("reorder to the same layout");
  return std::unique_ptr<Kernel>(std::make_unique<WideReorderKernel>(sizes, to));
}

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CreateReorderKernel(DataType dtype,
                                                      const std::vector<int64_t>& sizes,
                                                      Layout from, Layout to) {
  if (sizes.size() != 4) return InternalError("reorder between layouts needs a rank-4 value");
  if (DataTypeSize(dtype) == 8) return CreateWideReorderKernel(sizes, from, to);
  // A reorder moves bytes: types oneDNN lacks (bool, int16, ...) move as one it has of
  // the same width.
  StatusOr<dnnl::memory::data_type> known = onednn::ToDnnl(dtype);
  dnnl::memory::data_type dt = dnnl::memory::data_type::undef;
  if (known.ok()) {
    dt = *known;
  } else if (DataTypeSize(dtype) == 1) {
    dt = dnnl::memory::data_type::u8;
  } else if (DataTypeSize(dtype) == 2) {
    dt = dnnl::memory::data_type::bf16;
  } else if (DataTypeSize(dtype) == 4) {
    dt = dnnl::memory::data_type::s32;
  } else {
    return known.status();
  }
  auto tag = [](Layout l) {
    return l == Layout::kNhwc ? dnnl::memory::format_tag::nhwc : dnnl::memory::format_tag::nchw;
  };
  try {
    dnnl::memory::dims dims = onednn::ToDims(sizes);
    return std::unique_ptr<Kernel>(std::make_unique<ReorderKernel>(
        dnnl::memory::desc(dims, dt, tag(from)), dnnl::memory::desc(dims, dt, tag(to)), to));
  } catch (const dnnl::error& e) {
    return onednn::FromDnnlError(e, "creating a reorder");
  }
}

}  // namespace qtune::runtime
