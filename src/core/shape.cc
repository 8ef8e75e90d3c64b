#include "core/shape.h"

#include <limits>

namespace qtune {

Shape Shape::FromSizes(const std::vector<int64_t>& sizes) {
  std::vector<Dim> dims;
  dims.reserve(sizes.size());
  for (int64_t s : sizes) dims.push_back(Dim::Known(s));
  return Shape(std::move(dims));
}

bool Shape::is_fully_known() const {
  for (const Dim& d : dims_) {
    if (!d.is_known()) return false;
  }
  return true;
}

std::vector<int64_t> Shape::sizes() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim& d : dims_) out.push_back(d.value);
  return out;
}

std::string Shape::ToString() const {
  std::string out = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out += ",";
    if (dims_[i].is_known()) {
      out += std::to_string(dims_[i].value);
    } else if (!dims_[i].symbol.empty()) {
      out += dims_[i].symbol;
    } else {
      out += "?";
    }
  }
  return out + "]";
}

int64_t NumElements(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0) return -1;
    if (s != 0 && n > std::numeric_limits<int64_t>::max() / s) return -1;
    n *= s;
  }
  return n;
}

std::string SizesToString(const std::vector<int64_t>& sizes) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) out += "x";
    out += std::to_string(sizes[i]);
  }
  return out;
}

}  // namespace qtune
