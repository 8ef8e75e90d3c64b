// Shape function of MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins], from the values of
// its first two inputs. The compiler sizes the other signal ops (DFT, STFT, the windows) by
// running their kernels on zeros, but MelWeightMatrix's kernel rejects the zero sample rate
// and edges such a run would give it; this reads only the two inputs that set the sizes.
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

StatusOr<int64_t> ConstantScalar(const ShapeArgs& args, size_t i, const std::string& name) {
  if (!args.has_input(i)) return ShapeError(args.node, "needs input '" + name + "'");
  const ValueInfo& info = args.input(i);
  if (!info.has_constant()) {
    return ValueComputedAtRunTime(
        args.node, "input " + std::to_string(i) + " ('" + name + "') sets the output sizes");
  }
  const Tensor& t = info.constant;
  if (t.num_elements() != 1 || (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64)) {
    return ShapeError(args.node,
                      name + " must be one int32 or int64 value, not " + t.DebugString());
  }
  const int64_t v = t.dtype() == DataType::kInt64 ? t.data<int64_t>()[0] : t.data<int32_t>()[0];
  if (v < 0) return ShapeError(args.node, name + " is " + std::to_string(v) + "; it must be >= 0");
  return v;
}

StatusOr<std::vector<ValueInfo>> MelWeightMatrixShape(const ShapeArgs& args) {
  ASSIGN_OR_RETURN(const int64_t mel_bins, ConstantScalar(args, 0, "num_mel_bins"));
  ASSIGN_OR_RETURN(const int64_t dft_length, ConstantScalar(args, 1, "dft_length"));
  const int64_t type_code = args.node.GetInt("output_datatype", 1);
  if (type_code < 1 || type_code > 22 || !IsKnownDataType(static_cast<int32_t>(type_code))) {
    return ShapeError(args.node,
                      "output_datatype " + std::to_string(type_code) + " is not an ONNX data type");
  }
  return std::vector<ValueInfo>{
      MakeInfo(static_cast<DataType>(type_code), {dft_length / 2 + 1, mel_bins})};
}

}  // namespace

void RegisterSignalShapes(ShapeRegistry& registry) {
  registry.Register("MelWeightMatrix", MelWeightMatrixShape);
}

}  // namespace qtune::runtime
