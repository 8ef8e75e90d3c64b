// Shape functions of the control-flow ops: each infers its bodies' outputs for the sizes
// the bodies will see (runtime/control/control_flow.h states the rules).
#include "runtime/control/control_flow.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {

void RegisterControlFlowShapes(ShapeRegistry& registry) {
  registry.Register("If", &InferIfShapes);
  registry.Register("Loop", &InferLoopShapes);
  registry.Register("Scan", &InferScanShapes);
}

}  // namespace qtune::runtime
