// Reference kernels of less common ONNX ops, one file per family. RegisterMiscKernels
// (misc_register.cc, declared in registry.h) calls each file's Register function.
// Internal to src/runtime/reference.
#pragma once

#include "runtime/reference/registry.h"

namespace qtune::runtime::reference {

void RegisterShrinkKernels(ReferenceRegistry& registry);           // elementwise_shrink.cc
void RegisterBitShiftKernels(ReferenceRegistry& registry);         // elementwise_bitshift.cc
void RegisterEyeLikeKernels(ReferenceRegistry& registry);          // shape_eyelike.cc
void RegisterReverseSequenceKernels(ReferenceRegistry& registry);  // shape_reverse_sequence.cc
void RegisterMvnKernels(ReferenceRegistry& registry);              // nn_mvn.cc
void RegisterMaxUnpoolKernels(ReferenceRegistry& registry);        // nn_max_unpool.cc
void RegisterDetKernels(ReferenceRegistry& registry);              // linalg_det.cc
void RegisterEinsumKernels(ReferenceRegistry& registry);           // linalg_einsum.cc
void RegisterTfIdfKernels(ReferenceRegistry& registry);            // text_tfidf.cc

}  // namespace qtune::runtime::reference
