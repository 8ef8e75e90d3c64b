// qtune report WORKDIR_OR_JSON -o report.html: one self-contained HTML page with plots of an
// autotune run, a tune result or a quantization summary (docs/report.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output_paths.h"
#include "report/report.h"

namespace qtune::cli {
namespace {

struct ReportCliOptions {
  std::string input;
  std::string output;
};

int WriteHtmlReport(const ReportCliOptions& o) {
  const std::vector<std::string> inputs = {o.input, o.input + "/report.json",
                                           o.input + "/state.jsonl"};
  if (int code = CheckOutputIsNotAnInput("-o", o.output, inputs); code != kExitOk) return code;
  if (int code = CheckOutputWritable("-o", o.output); code != kExitOk) return code;
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
      "Write one self-contained HTML page with plots of an autotune, tune or quantize run");
  cmd->add_option("input", o->input,
                  "An autotune work dir (or its report.json), a `tune --json` or a "
                  "`quantize --json` output file")
      ->required();
  cmd->add_option("-o,--output", o->output, "The HTML file to write")->required();
  cmd->callback([o, exit_code] { *exit_code = WriteHtmlReport(*o); });
}

}  // namespace qtune::cli
