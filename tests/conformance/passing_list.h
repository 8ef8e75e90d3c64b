// The committed list of ONNX node tests that pass (passing_node_tests.txt): every listed
// test must keep passing, so a kernel that starts returning Unimplemented, or a loader
// change that drops an op, fails conformance_node_test instead of going unnoticed.
//
// The other libonnx-testdata folders have lists of the same format
// (passing_<folder>_tests.txt, '-' spelled '_').
//
// File format: one test folder name per line (e.g. "test_abs"); blank lines and lines
// starting with '#' are ignored. Written sorted, with a header comment saying how to
// regenerate it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace qtune::conformance {

// The names in the list file at `path`. NotFound if it does not exist.
StatusOr<std::set<std::string>> ReadPassingList(const std::string& path);
// Writes `names` as a list file, atomically; the header comment names libonnx-testdata
// folder `folder` (node, pytorch-converted, ...).
Status WritePassingList(const std::string& path, const std::set<std::string>& names,
                        const std::string& folder = "node");

struct PassingListReport {
  std::vector<std::string> regressed;      // "name: detail" for listed tests that ran and failed
  std::vector<std::string> newly_passing;  // passed, not listed
  std::vector<std::string> not_run;        // listed, not run (only reported if !filtered)
};

// `results`: every test that ran, mapped to nullopt when it passed or to why it did not
// (its UNSUPPORTED or FAIL detail). `filtered`: only part of the suite ran, so listed tests
// that did not run are not reported.
PassingListReport ComparePassingList(
    const std::set<std::string>& listed,
    const std::map<std::string, std::optional<std::string>>& results, bool filtered);

}  // namespace qtune::conformance
