// Expected failures of the libonnx-testdata folders besides node/ (pytorch-converted,
// pytorch-operator, simple): tests qtune loads and compiles but gets wrong, with why.
#include "conformance/expected_failures.h"

namespace qtune::conformance {

const std::map<std::string, std::string>& ExpectedFailuresIn(const std::string& folder) {
  static const auto* by_folder = new std::map<std::string, std::map<std::string, std::string>>{
      // PRelu before opset 7 took a per-channel slope ([C] against [N,C,...], PyTorch's
      // semantics, which these outputs follow); opset 7 made it numpy broadcasting, which
      // qtune applies to every opset and so refuses [3] against [2,3,4]. ONNX Runtime
      // refuses PRelu-6 altogether (ort_results.txt).
      {"pytorch-converted",
       {{"test_PReLU_1d_multiparam", "PRelu-6 per-channel slope; qtune broadcasts as opset 7+"},
        {"test_PReLU_2d_multiparam", "PRelu-6 per-channel slope; qtune broadcasts as opset 7+"},
        {"test_PReLU_3d_multiparam", "PRelu-6 per-channel slope; qtune broadcasts as opset 7+"}}},
      {"pytorch-operator", {}},
      {"simple", {}},
  };
  static const auto* none = new std::map<std::string, std::string>();
  if (folder == "node") return ExpectedFailures();
  auto it = by_folder->find(folder);
  return it != by_folder->end() ? it->second : *none;
}

}  // namespace qtune::conformance
