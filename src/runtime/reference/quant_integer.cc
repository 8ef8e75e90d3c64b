// ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul reference kernels (being written).
#include "runtime/reference/registry.h"
