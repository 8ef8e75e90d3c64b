// The size limit of one tensor (kMaxTensorBytes, core/tensor.h) as a check, for callers
// that take sizes from outside (--shape, a measuring job's input sizes) and must refuse
// them before anything is compiled or allocated for them: a plan compiled for absurd sizes
// can fail in ways an allocation check never sees (a dimension of 2^32 crashed the
// measuring child with SIGFPE, issue 24 item 7).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"

namespace qtune {

// OK when a tensor of `dtype` and `sizes` may be allocated: sizes not negative and the byte
// size within kMaxTensorBytes (16 GiB). InvalidArgument for a negative size,
// ResourceExhausted "tensor of AxBxC float32 exceeds the 16 GiB limit" otherwise.
// Tensor::Allocate makes the same check.
Status CheckTensorSize(DataType dtype, const std::vector<int64_t>& sizes);

}  // namespace qtune
