// Shapes whose dimensions are either known sizes or named symbols ("batch",
// "p2o.DynamicDimension.0") or unknown (neither).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qtune {

struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // set when the dimension is symbolic

  static Dim Known(int64_t v) { return Dim{v, {}}; }
  static Dim Symbolic(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim Unknown() { return Dim{}; }
  bool is_known() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};

class Shape {
 public:
  Shape() = default;  // rank 0 (a scalar)
  explicit Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}
  static Shape FromSizes(const std::vector<int64_t>& sizes);

  size_t rank() const { return dims_.size(); }
  const std::vector<Dim>& dims() const { return dims_; }
  const Dim& dim(size_t i) const { return dims_[i]; }
  bool is_fully_known() const;
  // REQUIRES: is_fully_known().
  std::vector<int64_t> sizes() const;
  // "[N,3,224,224]", "?" for unknown dims.
  std::string ToString() const;
  bool operator==(const Shape&) const = default;

 private:
  std::vector<Dim> dims_;
};

// Product of sizes, or -1 if a size is negative or the product overflows int64.
int64_t NumElements(const std::vector<int64_t>& sizes);
// "1x3x224x224"
std::string SizesToString(const std::vector<int64_t>& sizes);

}  // namespace qtune
