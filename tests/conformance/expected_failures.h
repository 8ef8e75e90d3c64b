// ONNX backend tests (node tests here; the model folders in expected_failures_models.cc)
// that qtune supports (they load and compile) but gets wrong, each with the reason.
// conformance_node_test asserts that this list is exact: a listed test that passes or turns
// unsupported is reported so the entry can be removed.
#pragma once

#include <map>
#include <string>

namespace qtune::conformance {

// Test folder name -> why it fails.
const std::map<std::string, std::string>& ExpectedFailures();

// The same for libonnx-testdata folder `folder` ("node" gives ExpectedFailures(); the
// others are in expected_failures_models.cc); empty for a folder without entries.
const std::map<std::string, std::string>& ExpectedFailuresIn(const std::string& folder);

}  // namespace qtune::conformance
