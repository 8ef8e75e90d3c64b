#include "conformance/tensor_compare.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "core/float_convert.h"

namespace qtune::conformance {
namespace {

// Floating-point elements as doubles (complex numbers as two parts); false for types that
// are compared bit-exact.
bool FloatValues(const Tensor& t, std::vector<double>* out) {
  const int64_t n = t.num_elements();
  auto convert = [&](auto tag, auto to_double, int64_t per_element) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(t.raw_data());
    out->resize(static_cast<size_t>(n * per_element));
    for (int64_t i = 0; i < n * per_element; ++i) (*out)[i] = to_double(p[i]);
  };
  auto identity = [](auto v) { return static_cast<double>(v); };
  switch (t.dtype()) {
    case DataType::kFloat32:
      convert(float{}, identity, 1);
      return true;
    case DataType::kFloat64:
      convert(double{}, identity, 1);
      return true;
    case DataType::kComplex64:
      convert(float{}, identity, 2);
      return true;
    case DataType::kComplex128:
      convert(double{}, identity, 2);
      return true;
    case DataType::kFloat16:
      convert(
          uint16_t{}, [](uint16_t b) { return double{HalfToFloat(b)}; }, 1);
      return true;
    case DataType::kBfloat16:
      convert(
          uint16_t{}, [](uint16_t b) { return double{Bfloat16ToFloat(b)}; }, 1);
      return true;
    case DataType::kFloat8E4M3FN:
      convert(
          uint8_t{}, [](uint8_t b) { return double{Float8E4M3FNToFloat(b)}; }, 1);
      return true;
    case DataType::kFloat8E5M2:
      convert(
          uint8_t{}, [](uint8_t b) { return double{Float8E5M2ToFloat(b)}; }, 1);
      return true;
    default:
      return false;  // integers, bool and the FNUZ float8 types: bit-exact
  }
}

bool Close(double a, double e, const Tolerance& tolerance) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (std::isinf(a) || std::isinf(e)) return a == e;
  return std::fabs(a - e) <= tolerance.atol + tolerance.rtol * std::fabs(e);
}

}  // namespace

std::string CompareTensors(const Tensor& actual, const Tensor& expected,
                           const Tolerance& tolerance) {
  if (!actual.is_valid()) return "no output";
  if (actual.dtype() != expected.dtype() || actual.sizes() != expected.sizes()) {
    return "got " + actual.DebugString() + ", expected " + expected.DebugString();
  }
  std::vector<double> a, e;
  std::ostringstream errors;
  int64_t bad = 0, total = 0;
  if (FloatValues(actual, &a) && FloatValues(expected, &e)) {
    total = static_cast<int64_t>(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      if (Close(a[i], e[i], tolerance)) continue;
      if (++bad <= 4) errors << " [" << i << "] " << a[i] << " vs " << e[i] << ";";
    }
  } else {
    const size_t elem = DataTypeSize(actual.dtype());
    const auto* pa = static_cast<const unsigned char*>(actual.raw_data());
    const auto* pe = static_cast<const unsigned char*>(expected.raw_data());
    total = actual.num_elements();
    for (int64_t i = 0; i < total; ++i) {
      if (std::memcmp(pa + i * elem, pe + i * elem, elem) == 0) continue;
      if (++bad <= 4) errors << " element " << i << " differs;";
    }
  }
  if (bad == 0) return "";
  std::ostringstream out;
  out << bad << " of " << total << " values differ:" << errors.str();
  return out.str();
}

}  // namespace qtune::conformance
