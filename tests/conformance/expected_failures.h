// ONNX node tests that qtune supports (they load and compile) but gets wrong, each with the
// reason. conformance_node_test asserts that this list is exact: a listed test that passes
// or turns unsupported is reported so the entry can be removed.
#pragma once

#include <map>
#include <string>

namespace qtune::conformance {

// Test folder name -> why it fails.
const std::map<std::string, std::string>& ExpectedFailures();

}  // namespace qtune::conformance
