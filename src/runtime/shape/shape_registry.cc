#include "runtime/shape/shape_registry.h"

#include "core/shape.h"
#include "runtime/fusion/matmul_nbits.h"

namespace qtune::runtime {

const ShapeRegistry& ShapeRegistry::Get() {
  static const ShapeRegistry* registry = [] {
    auto* r = new ShapeRegistry();
    RegisterElementwiseShapes(*r);
    RegisterNnShapes(*r);
    RegisterRecurrentShapes(*r);
    RegisterTensorShapes(*r);
    RegisterCropCol2ImShapes(*r);
    RegisterSamplingLossShapes(*r);
    RegisterSignalShapes(*r);
    RegisterMiscShapes(*r);
    RegisterQuantShapes(*r);
    RegisterQuantFusedShapes(*r);
    RegisterMatMulNBitsShape(*r);  // com.microsoft and qtune (fusion/matmul_nbits.h)
    RegisterControlFlowShapes(*r);
    return r;
  }();
  return *registry;
}

void ShapeRegistry::Register(std::string op_type, ShapeFn fn) { fns_[std::move(op_type)] = fn; }

ShapeFn ShapeRegistry::Find(std::string_view op_type) const {
  auto it = fns_.find(std::string(op_type));
  return it == fns_.end() ? nullptr : it->second;
}

Status ValueComputedAtRunTime(const ir::Node& node, const std::string& why) {
  return UnimplementedError(node.DebugName() + ": " + why +
                            ", but it is computed at run time; qtune needs it to be constant "
                            "to compile this node ahead of time");
}

Status ShapeError(const ir::Node& node, const std::string& message) {
  return InvalidArgumentError(node.DebugName() + ": " + message);
}

ValueInfo MakeInfo(DataType dtype, std::vector<int64_t> sizes) {
  ValueInfo info;
  info.dtype = dtype;
  info.sizes = std::move(sizes);
  return info;
}

StatusOr<std::vector<int64_t>> BroadcastSizes(const ir::Node& node, const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return ShapeError(
          node, "cannot broadcast [" + SizesToString(a) + "] with [" + SizesToString(b) + "]");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace qtune::runtime
