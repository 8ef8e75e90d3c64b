// Every kernel file's registration function, one line each. qtune_runtime is a static
// library: a kernel file nothing calls into would be dropped by the linker together with
// a self-registering static object, so the registry calls each file's function from here.
//
// Adding an op: write its kernel file with `void RegisterXxxKernels(KernelRegistry&)`
// next to the factory, and add `X(Xxx)` below. Order here only breaks priority ties.
#include "runtime/kernels/kernel_registry.h"

#define QTUNE_KERNEL_FILES(X) \
  X(OnednnQConv)              \
  X(OnednnQDeconv)            \
  X(OnednnQMatMul)            \
  X(QAdd)                     \
  X(QuantElementwise)         \
  X(QuantLookup)              \
  X(OnednnConv)               \
  X(OnednnConv1dMatMul)       \
  X(NativeDepthwiseConv1d)    \
  X(OnednnWinogradConv)       \
  X(OnednnUpsampleDeconv)     \
  X(OnednnDeconv)             \
  X(OnednnPool)               \
  X(NativeGemv)               \
  X(NativeLowBitMatMul)       \
  X(OnednnMatMul)             \
  X(OnednnElementwise)        \
  X(OnednnResizeConcat)       \
  X(OnednnSoftmaxNorm)        \
  X(OnednnRnn)                \
  X(OnednnBatchMatMul)        \
  X(OnednnAttention)          \
  X(OnednnTranspose)          \
  X(NativeSplit)              \
  X(NativeCopyRuns)           \
  X(NativeReduce)             \
  X(NativeUnary)              \
  X(NativeBatchNorm)          \
  X(NativeLayerNorm)          \
  X(NativeAttention)          \
  X(NativeQdqAverage)         \
  X(Reference)

namespace qtune::runtime {

#define QTUNE_DECLARE_KERNEL_FILE(name) void Register##name##Kernels(KernelRegistry& registry);
QTUNE_KERNEL_FILES(QTUNE_DECLARE_KERNEL_FILE)
#undef QTUNE_DECLARE_KERNEL_FILE

void RegisterBuiltinKernels(KernelRegistry& registry) {
#define QTUNE_REGISTER_KERNEL_FILE(name) Register##name##Kernels(registry);
  QTUNE_KERNEL_FILES(QTUNE_REGISTER_KERNEL_FILE)
#undef QTUNE_REGISTER_KERNEL_FILE
}

}  // namespace qtune::runtime
