// Tensor: a dense, C-order (row-major) array of one DataType.
//
// Storage is either owned (allocated by qtune, 64-byte aligned, shared between copies
// of the Tensor: copying a Tensor is cheap and aliases the data; use Clone() for a deep
// copy) or borrowed (the caller's memory; the caller keeps it alive and unchanged for as
// long as any Tensor refers to it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/dtype.h"
#include "core/status.h"

namespace qtune {

// Largest single tensor qtune will allocate (16 GiB): bigger declared sizes in a file are
// treated as corrupt instead of exhausting memory.
inline constexpr int64_t kMaxTensorBytes = int64_t{16} << 30;

class Tensor {
 public:
  Tensor() = default;  // an empty float32 scalar-less placeholder; is_valid() == false

  // Allocates zero-filled owned storage. Fails on a non-storable type, negative sizes or a
  // size above kMaxTensorBytes.
  static StatusOr<Tensor> Allocate(DataType dtype, std::vector<int64_t> sizes);
  // The same without the zero fill: the contents are whatever the memory held. For buffers
  // that are overwritten whole before anyone reads them (Session::Run's outputs, which
  // every kernel of a plan writes completely).
  static StatusOr<Tensor> AllocateUninitialized(DataType dtype, std::vector<int64_t> sizes);
  // Wraps caller memory. REQUIRES: `data` holds NumElements(sizes) elements of dtype.
  static Tensor Borrow(DataType dtype, std::vector<int64_t> sizes, void* data);
  // Owned tensor from values, e.g. Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}).
  template <typename T>
  static Tensor FromVector(std::vector<int64_t> sizes, const std::vector<T>& values);
  template <typename T>
  static Tensor Scalar(T value) {
    return FromVector<T>({}, {value});
  }

  bool is_valid() const { return valid_; }
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  size_t rank() const { return sizes_.size(); }
  int64_t size(size_t axis) const { return sizes_[axis]; }
  int64_t num_elements() const { return num_elements_; }
  size_t byte_size() const { return static_cast<size_t>(num_elements_) * DataTypeSize(dtype_); }
  bool is_borrowed() const { return valid_ && owned_ == nullptr; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  std::span<const std::byte> bytes() const {
    return {static_cast<const std::byte*>(data_), byte_size()};
  }
  // REQUIRES: sizeof(T) == DataTypeSize(dtype()).
  template <typename T>
  T* data() {
    QTUNE_CHECK(sizeof(T) == DataTypeSize(dtype_));
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    QTUNE_CHECK(sizeof(T) == DataTypeSize(dtype_));
    return static_cast<const T*>(data_);
  }
  template <typename T>
  std::span<T> span() {
    return {data<T>(), static_cast<size_t>(num_elements_)};
  }
  template <typename T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<size_t>(num_elements_)};
  }

  // Makes this a borrowed tensor over `other`'s data, with its type and sizes (`other`'s
  // storage must outlive the use). Reuses this tensor's size storage: no allocation unless
  // the rank grows. For bindings re-pointed at every run (PlanExecutor::Rebind).
  void ViewOf(const Tensor& other);
  // Points this tensor at `data`, keeping type and sizes; drops any ownership.
  // REQUIRES: `data` holds byte_size() bytes of this tensor's type.
  void RebindData(void* data);

  // Deep copy into new owned storage.
  Tensor Clone() const;
  // Same data, new sizes. Fails if the element count differs.
  StatusOr<Tensor> Reshaped(std::vector<int64_t> sizes) const;
  // "float32[1x3x224x224]"
  std::string DebugString() const;

 private:
  DataType dtype_ = DataType::kFloat32;
  std::vector<int64_t> sizes_;
  int64_t num_elements_ = 0;
  std::shared_ptr<std::byte[]> owned_;  // null when borrowed
  void* data_ = nullptr;
  bool valid_ = false;
};

template <typename T>
Tensor Tensor::FromVector(std::vector<int64_t> sizes, const std::vector<T>& values) {
  DataType dtype = DataType::kUndefined;
  if constexpr (std::is_same_v<T, float>)
    dtype = DataType::kFloat32;
  else if constexpr (std::is_same_v<T, double>)
    dtype = DataType::kFloat64;
  else if constexpr (std::is_same_v<T, int8_t>)
    dtype = DataType::kInt8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    dtype = DataType::kUint8;
  else if constexpr (std::is_same_v<T, int16_t>)
    dtype = DataType::kInt16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    dtype = DataType::kUint16;
  else if constexpr (std::is_same_v<T, int32_t>)
    dtype = DataType::kInt32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    dtype = DataType::kUint32;
  else if constexpr (std::is_same_v<T, int64_t>)
    dtype = DataType::kInt64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    dtype = DataType::kUint64;
  else if constexpr (std::is_same_v<T, bool>)
    dtype = DataType::kBool;
  else
    static_assert(sizeof(T) == 0, "FromVector: unsupported element type");
  auto tensor = Allocate(dtype, std::move(sizes));
  QTUNE_CHECK(tensor.ok());
  QTUNE_CHECK(static_cast<int64_t>(values.size()) == tensor->num_elements());
  T* out = tensor->template data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return std::move(tensor).value();
}

}  // namespace qtune
