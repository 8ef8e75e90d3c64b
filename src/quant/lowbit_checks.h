// Usage checks of a low-bit (weight-only, blockwise) recipe against a model and a target,
// cheap enough to run before calibration (`qtune quantize` exits 2 on them).
#pragma once

#include "core/status.h"
#include "ir/graph.h"
#include "quant/quant_types.h"
#include "quant/recipe.h"

namespace qtune::quant {

// InvalidArgument naming the quantizer, the rule and the fix when the activation input
// quantizer of a Conv/ConvTranspose/MatMul/Gemm is given a weight-only format or a block
// size, or, for some MatMul/Gemm with a constant 2-D weight or Conv with a constant weight
// (blocked along its input channels):
//  * the format fixes its block size (mxfp8: 32) and a rule gives another;
//  * a weight-only format (int4) is asked while the layer's activation input keeps its
//    quantizer;
//  * a block size given by a rule that names the quantizer exactly (no glob) does not fit
//    the reduction axis (shorter than a block or not a multiple of it);
//  * the target cannot take the format: trt with zero points (TensorRT's int4 weights
//    are symmetric);
//  * a Conv weight asks for clip or awq without blocks (per output channel).
// Layers a glob rule's block does not fit are not errors: placement leaves them float.
Status CheckLowBitRecipe(const ir::Graph& graph, const Recipe& recipe, Target target);

}  // namespace qtune::quant
