// NaN and infinity created inside a graph. oneDNN's max-based kernels (ReLU, pooling,
// clamps) turn NaN into numbers, so the fast tier must not see a NaN; Session::Run sends a
// call whose inputs hold NaN or inf to the reference tier (session.h). From finite inputs,
// a non-finite value can only appear at an op with a domain boundary or an overflow-prone
// function (Div by 0, Log of 0 or less, Sqrt of a negative, Exp of a large value, ...):
// the compiler marks those steps (PlanStep::check_non_finite) and the executor checks their
// outputs. A check that finds one bumps this thread's count, and Session::Run then runs the
// call again on the reference tier. Control-flow bodies run on the caller's thread, so
// their steps are counted too.
//
// Not covered: overflow of ordinary arithmetic on finite values (a Conv, MatMul, Add or Mul
// whose exact result exceeds the float range), which ONNX Runtime gives as inf.
#pragma once

#include <cstdint>
#include <span>

#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {

// True when a floating-point tensor holds NaN or +-inf; false for other types.
bool AnyNonFinite(const Tensor& t);

// True when `node` (default domain) can produce NaN or inf from finite inputs. `inputs` are
// the compiler's value infos, parallel to node.inputs(), nullptr for an omitted input: a
// constant divisor of magnitude >= 1 or a constant Pow exponent that is a non-negative
// integer cannot.
bool MayCreateNonFinite(const ir::Node& node, std::span<const ValueInfo* const> inputs);

// How many checked steps found NaN or inf on this thread so far (see above).
int64_t NonFiniteStepsSeen();
void CountNonFiniteStep();

}  // namespace qtune::runtime
