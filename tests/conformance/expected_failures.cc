#include "conformance/expected_failures.h"

namespace qtune::conformance {

const std::map<std::string, std::string>& ExpectedFailures() {
  static const auto* failures = new std::map<std::string, std::string>{
      // Test data, not qtune: ONNX 1.12 made bfloat16 by truncating float32; qtune rounds
      // to nearest even, as ONNX >= 1.14's Cast and reference do. 5 of 12 values differ by
      // one bfloat16 step.
      {"test_cast_FLOAT_to_BFLOAT16",
       "ONNX 1.12 data truncates float32 to bfloat16; qtune rounds to nearest even (ONNX >= "
       "1.14)"},
      // Test data, not qtune: the model declares input 'like' as [3,4] but its data file is
      // [1]; Session::Run rightly refuses an input whose rank differs from the declared one.
      // (The FLOAT_to_BFLOAT16 pair would then also meet the truncation above.)
      {"test_castlike_BFLOAT16_to_FLOAT", "data 'like' is [1], the model declares [3,4]"},
      {"test_castlike_BFLOAT16_to_FLOAT_expanded", "data 'like' is [1], the model declares [3,4]"},
      {"test_castlike_FLOAT_to_BFLOAT16", "data 'like' is [1], the model declares [3,4]"},
      {"test_castlike_FLOAT_to_BFLOAT16_expanded", "data 'like' is [1], the model declares [3,4]"},
      // Test data, not qtune: the spec says MaxUnpool's indices are flat indices into the
      // output ([1,1,5,5] here); the data places them by their (row, col) in the 4x4
      // input of the pooling instead. ONNX Runtime 1.30 fails it the same way (element 5).
      {"test_maxunpool_export_with_output_shape",
       "data reads indices in the pooled input's 4x4 layout, not the 5x5 output's (ORT agrees "
       "with qtune)"},
  };
  return *failures;
}

}  // namespace qtune::conformance
