// Q/DQ placement: which tensors of a (pass-pipelined) graph get quantizers, with which
// config, and why other layers stay in floating point. And the guards that run after
// calibration. The rules (docs/formats/recipe.md has the user-facing version):
//
//  * Conv, ConvTranspose, Gemm, MatMul: activation input per tensor, constant weight per
//    channel (Conv axis 0, ConvTranspose axis 1, Gemm/MatMul the output-feature axis).
//    Quantizer names "<node>/input_quantizer", "<node>/input1_quantizer" (second activation
//    of an attention MatMul), "<node>/weight_quantizer".
//  * Residual Adds are found structurally (residual.h). By default the shortcut input is
//    quantized ("<add>/shortcut_quantizer", role "residual shortcut") so Conv+Add fuses;
//    with Recipe::residual_add_quantizers both inputs are ("<add>/shortcut_residual_quantizer",
//    "<add>/branch_residual_quantizer", role "residual add").
//  * Pass-through ops (cpu: MaxPool, AveragePool, GlobalAveragePool, Reshape, Flatten,
//    Transpose, Concat, Resize; trt: the pools, Concat, Resize) get input quantizers when
//    their output is quantized, in the output's scale group, so they run in int8. Concat
//    inputs always share one scale.
//  * Skipped (SkippedLayer): convs with < 16 input or output channels (groups x per-group
//    channels) except a first layer fed by a graph input; Gemm/MatMul with M or N == 1
//    (GEMV) or K or N < 16; attention MatMuls on cpu (no int8 kernel) and, on trt, int8
//    with sequence length > 512 or fp8 with head size > 256 or <= 8; LayerNorm internals
//    and Softmax are never quantized.
//  * Recipe rules apply per quantizer (recipe.h); enable: false removes the quantizer.
//  * fp8: input quantizers of convs with <= 3 input channels are disabled (GuardHit
//    "fp8_low_channel_input"); their weights stay quantized.
//  * trt: symmetric only (a recipe asking symmetric: false is an error). cpu: symmetric:
//    false makes activations asymmetric uint8; weights always stay symmetric int8.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "quant/quant_types.h"
#include "quant/recipe.h"

namespace qtune::quant {

// Concrete sizes of every graph input (by name), e.g. those of one calibration batch.
using InputSizes = std::map<std::string, std::vector<int64_t>>;

// REQUIRES: `graph` went through passes::RunPipeline (BN folded, constants folded).
// Runs shape inference for `input_sizes` (an error names the node). The plan's sites have
// no ranges yet; disabled sites (enabled = false) are kept so the summary can show them,
// and export must skip them.
StatusOr<QuantPlan> PlanQuantization(const ir::Graph& graph, const Recipe& recipe, Target target,
                                     const InputSizes& input_sizes);

// After calibration filled QuantSite::range of the activation sites: disables every site
// whose amax is 0, negative, NaN or infinite (GuardHit "dead_quantizer"), together with
// every other site of its scale group (and both inputs of an int8 residual Add), and pins
// Softmax outputs read by attention MatMuls to [0, 1] (GuardHit "softmax_fixed_range").
// Weight sites and already disabled sites are left alone. Idempotent.
void ApplyGuards(QuantPlan& plan);

}  // namespace qtune::quant
