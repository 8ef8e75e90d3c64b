#include "core/tensor.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "core/shape.h"
#include "core/tensor_limits.h"

namespace qtune {
namespace {

constexpr size_t kAlignment = 64;

struct AlignedDelete {
  void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(kAlignment)); }
};

}  // namespace

Status CheckTensorSize(DataType dtype, const std::vector<int64_t>& sizes) {
  const int64_t n = NumElements(sizes);  // -1 for a negative size or an int64 overflow
  bool negative = false;
  for (int64_t s : sizes) negative = negative || s < 0;
  if (negative) return InvalidArgumentError("invalid tensor sizes " + SizesToString(sizes));
  const int64_t elem = std::max<int64_t>(1, static_cast<int64_t>(DataTypeSize(dtype)));
  if (n < 0 || n > kMaxTensorBytes / elem) {
    return ResourceExhaustedError("tensor of " + SizesToString(sizes) + " " +
                                  std::string(DataTypeName(dtype)) + " exceeds the " +
                                  std::to_string(kMaxTensorBytes >> 30) + " GiB limit");
  }
  return Status::Ok();
}

StatusOr<Tensor> Tensor::Allocate(DataType dtype, std::vector<int64_t> sizes) {
  ASSIGN_OR_RETURN(Tensor t, AllocateUninitialized(dtype, std::move(sizes)));
  // The whole allocation, padding to the alignment included (as before the split).
  const size_t bytes = t.byte_size();
  std::memset(t.data_, 0,
              bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment);
  return t;
}

StatusOr<Tensor> Tensor::AllocateUninitialized(DataType dtype, std::vector<int64_t> sizes) {
  if (!IsStorableDataType(dtype)) {
    return UnimplementedError("tensors of type " + std::string(DataTypeName(dtype)) +
                              " are not supported");
  }
  RETURN_IF_ERROR(CheckTensorSize(dtype, sizes));
  const int64_t n = NumElements(sizes);
  const int64_t elem = static_cast<int64_t>(DataTypeSize(dtype));
  Tensor t;
  t.dtype_ = dtype;
  t.sizes_ = std::move(sizes);
  t.num_elements_ = n;
  size_t bytes = static_cast<size_t>(n * elem);
  size_t alloc = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  // A size within the limit may still be more than this machine has (sizes a model computes
  // while it runs): an error, not std::bad_alloc.
  static const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                   static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  auto* p = alloc > physical ? nullptr
                             : static_cast<std::byte*>(::operator new[](
                                   alloc, std::align_val_t(kAlignment), std::nothrow));
  if (p == nullptr) {
    return ResourceExhaustedError("cannot allocate a tensor of " + SizesToString(t.sizes_) + " " +
                                  std::string(DataTypeName(dtype)) + " (" +
                                  std::to_string(bytes >> 20) + " MiB): not enough memory");
  }
  t.owned_ = std::shared_ptr<std::byte[]>(p, AlignedDelete());
  t.data_ = p;
  t.valid_ = true;
  return t;
}

Tensor Tensor::Borrow(DataType dtype, std::vector<int64_t> sizes, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.num_elements_ = NumElements(sizes);
  QTUNE_CHECK(t.num_elements_ >= 0);
  t.sizes_ = std::move(sizes);
  t.data_ = data;
  t.valid_ = true;
  return t;
}

void Tensor::ViewOf(const Tensor& other) {
  dtype_ = other.dtype_;
  sizes_.assign(other.sizes_.begin(), other.sizes_.end());
  num_elements_ = other.num_elements_;
  owned_.reset();
  data_ = other.data_;
  valid_ = other.valid_;
}

void Tensor::RebindData(void* data) {
  owned_.reset();
  data_ = data;
}

Tensor Tensor::Clone() const {
  if (!valid_) return Tensor();
  auto copy = Allocate(dtype_, sizes_);
  QTUNE_CHECK(copy.ok());
  if (byte_size() > 0) std::memcpy(copy->raw_data(), data_, byte_size());
  return std::move(copy).value();
}

StatusOr<Tensor> Tensor::Reshaped(std::vector<int64_t> sizes) const {
  if (NumElements(sizes) != num_elements_) {
    return InvalidArgumentError("cannot reshape " + DebugString() + " to " + SizesToString(sizes));
  }
  Tensor t = *this;
  t.sizes_ = std::move(sizes);
  return t;
}

std::string Tensor::DebugString() const {
  if (!valid_) return "<invalid tensor>";
  return std::string(DataTypeName(dtype_)) + "[" + SizesToString(sizes_) + "]";
}

}  // namespace qtune
