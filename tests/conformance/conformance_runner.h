// Running one ONNX backend test folder (model.onnx + test_data_set_*) through
// runtime::Session on both tiers, and classifying the result. Shared by every folder of
// libonnx-testdata that conformance_node_test covers (node, pytorch-converted, ...).
#pragma once

#include <string>

#include "conformance/tensor_compare.h"

namespace qtune::conformance {

enum class Verdict { kPass, kUnsupported, kFail };

// "PASS", "UNSUPPORTED" or "FAIL".
const char* VerdictName(Verdict verdict);

struct Outcome {
  Verdict verdict = Verdict::kPass;
  std::string detail;  // the error or mismatch; empty on PASS
  // UNSUPPORTED only for inputs computed at run time, and passes with them as constants.
  bool passes_with_constant_inputs = false;
};

struct RunOptions {
  Tolerance tolerance;
  // Also run on the reference tier (the oneDNN tier always runs).
  bool reference_tier = true;
};

// Runs test folder `dir` (every data set; both tiers):
//   PASS         every run matches the expected outputs within `options.tolerance`;
//   UNSUPPORTED  loading, reading the data, compiling or a kernel said Unimplemented;
//   FAIL         anything else: wrong values, wrong sizes, any other error.
// A test UNSUPPORTED because a Reshape shape, Slice starts... arrive as graph inputs is run
// again with those inputs bound as initializers; `passes_with_constant_inputs` says whether
// that passed (a FAIL there makes the whole test FAIL).
// Thread-safe: tests may run concurrently (each builds its own sessions).
Outcome RunTestFolder(const std::string& dir, const RunOptions& options);

// The group an unsupported test is filed under: its single op; or, for multi-node models
// (function expansions), the ops that have no reference kernel, else its first op.
std::string GroupOf(const std::string& dir);

}  // namespace qtune::conformance
