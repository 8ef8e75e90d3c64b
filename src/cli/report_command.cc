// qtune report INPUT -o report.html: one self-contained HTML page with plots of an
// autotune run, a tune result, a quantization summary or a tune checkpoint (docs/report.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output_paths.h"
#include "core/sha256.h"
#include "report/checkpoint_report.h"
#include "report/report.h"
#include "tune/checkpoint.h"

namespace qtune::cli {
namespace {

struct ReportCliOptions {
  std::string input;
  std::string output;
  bool no_verify = false;  // checkpoints: skip the .sha256 check (as inspect, run, bench)
};

// A .qtc: verified and read as `qtune inspect` reads it (tune::ReadManifestOnly: same
// checks, same errors, the cache untouched), then rendered.
int WriteCheckpointHtmlReport(const ReportCliOptions& o) {
  tune::LoadCheckpointOptions load;
  load.verify = !o.no_verify;
  auto manifest = tune::ReadManifestOnly(o.input, load);
  if (!manifest.ok()) return ReportAndExitCode(manifest.status());
  auto digest = Sha256File(o.input);
  if (!digest.ok()) return ReportAndExitCode(digest.status());
  report::CheckpointReportInput input;
  input.source = o.input;
  input.manifest = tune::ManifestToJson(*manifest);
  input.archive_sha256 = *digest;
  input.verified = load.verify;
  if (Status written = report::WriteCheckpointReport(input, o.output); !written.ok()) {
    return ReportAndExitCode(written);
  }
  std::printf("wrote %s (checkpoint report of %s%s)\n", o.output.c_str(), o.input.c_str(),
              load.verify ? "" : ", NOT verified");
  return kExitOk;
}

int WriteHtmlReport(const ReportCliOptions& o) {
  const std::vector<std::string> inputs = {o.input, o.input + "/report.json",
                                           o.input + "/state.jsonl", o.input + ".sha256"};
  if (int code = CheckOutputIsNotAnInput("-o", o.output, inputs); code != kExitOk) return code;
  if (int code = CheckOutputWritable("-o", o.output); code != kExitOk) return code;
  if (tune::LooksLikeCheckpoint(o.input)) return WriteCheckpointHtmlReport(o);
  auto kind = report::WriteReport(o.input, o.output);
  if (!kind.ok()) return ReportAndExitCode(kind.status());
  std::printf("wrote %s (%s report of %s)\n", o.output.c_str(), report::ReportKindName(*kind),
              o.input.c_str());
  return kExitOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReportCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page with plots of an autotune, tune or quantize run, "
      "or of a tune checkpoint");
  cmd->add_option("input", o->input,
                  "An autotune work dir (or its report.json), a `tune --json` or a "
                  "`quantize --json` output file, or a `qtune tune` checkpoint (.qtc)")
      ->required();
  cmd->add_option("-o,--output", o->output, "The HTML file to write")->required();
  cmd->add_flag("--no-verify", o->no_verify,
                "Checkpoints: do not check the .qtc against its .sha256 file (unsafe)");
  cmd->callback([o, exit_code] { *exit_code = WriteHtmlReport(*o); });
}

}  // namespace qtune::cli
