// The HTML report of a `qtune tune` checkpoint (MODEL.qtc, docs/formats/checkpoint.md):
// the manifest's fields, the tune table it holds (the same plots and table as the tune
// report) and the weight fingerprint it was tuned with.
//
// This library only renders: reading and verifying the archive is the tune module's
// (tune::ReadManifestOnly); `qtune report` (src/cli/report_command.cc) does that and hands
// the manifest over, so report keeps depending on core alone.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"

namespace qtune::report {

struct CheckpointReportInput {
  std::string source;          // the .qtc path, shown in the page
  nlohmann::json manifest;     // tune::ManifestToJson of the verified (or unverified) manifest
  std::string archive_sha256;  // of the .qtc file
  bool verified = true;        // false: read with --no-verify; the page says so
};

// REQUIRES: `input.manifest` is an object (ManifestToJson's shape). Fields a manifest lacks
// read as "-" (json_fields.h); the weight table lists every fingerprinted weight.
std::string RenderCheckpointReport(const CheckpointReportInput& input);

// RenderCheckpointReport written to `output_path` atomically.
Status WriteCheckpointReport(const CheckpointReportInput& input, const std::string& output_path);

}  // namespace qtune::report
