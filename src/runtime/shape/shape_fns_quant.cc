// Shape functions of the ONNX quantization ops (being written).
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {

void RegisterQuantShapes(ShapeRegistry& registry) {}

}  // namespace qtune::runtime
