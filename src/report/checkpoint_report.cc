#include "report/checkpoint_report.h"

#include <fmt/format.h>

#include "core/file_io.h"
#include "report/html_writer.h"
#include "report/json_fields.h"
#include "report/svg_plot.h"
#include "report/tune_report.h"

namespace qtune::report {
namespace {

using nlohmann::json;

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

std::string NumberText(const json& j, const char* key) {
  auto v = NumberField(j, key);
  return v ? FormatNumber(*v) : "-";
}

// The tuning block's facts: what was chosen, how, and for which inputs.
std::vector<std::pair<std::string, std::string>> TuningFacts(const json& tuning) {
  std::string chosen = "-";
  for (const json& row : ArrayField(tuning, "table")) {
    if (BoolField(row, "chosen")) chosen = TuneRowName(row) + " thread(s)";
  }
  if (chosen == "-" && !StringField(tuning, "candidate").empty()) {
    chosen = StringField(tuning, "candidate") + " x" + NumberText(tuning, "threads") + " thread(s)";
  }
  const std::string note = StringField(tuning, "strategy_note");
  const auto plan = tuning.is_object() ? tuning.find("plan") : tuning.end();
  std::string plan_text = "none (a float candidate: nothing to quantize)";
  if (plan != tuning.end() && plan->is_string()) plan_text = plan->get<std::string>();
  return {{"chosen", chosen},
          {"strategy",
           OrDash(StringField(tuning, "strategy")) + (note.empty() ? "" : " (" + note + ")")},
          {"recipe", OrDash(StringField(tuning, "recipe"))},
          {"accuracy check", "output SQNR >= " + NumberText(tuning, "min_sqnr_db") + " dB"},
          {"measured on", OrDash(StringField(tuning, "cpu"))},
          {"measured input sizes", TuneInputSizes(ObjectField(tuning, "input_sizes"))},
          {"quantization plan entry", plan_text}};
}

void AddWeightSection(HtmlPage& page, const json& weights) {
  page.Heading("Weights it was tuned with");
  const json& tensors = ArrayField(weights, "tensors");
  page.Paragraph(fmt::format(
      "The checkpoint holds no weights, only a {} digest of each of the {} weights of the "
      "model it was tuned on. Loading it checks the model you give against these; a model "
      "with other weights is refused (--allow-weight-mismatch rebuilds from them).",
      OrDash(StringField(weights, "algorithm")), tensors.size()));
  page.Facts({{"weights fingerprinted", std::to_string(tensors.size())},
              {"digest of all of them", OrDash(StringField(weights, "whole"))}});
  HtmlTable t;
  t.header = {"weight", "digest"};
  for (const json& tensor : tensors) {
    t.rows.push_back({StringField(tensor, "name"), StringField(tensor, "sha256")});
  }
  if (!t.rows.empty()) page.Table(t);
}

}  // namespace

std::string RenderCheckpointReport(const CheckpointReportInput& input) {
  const json& manifest = input.manifest;
  const json& tuning = ObjectField(manifest, "tuning");
  HtmlPage page("qtune checkpoint report",
                {"source: " + input.source,
                 input.verified ? "verified against its .sha256 file"
                                : "NOT verified (--no-verify): its contents may have been "
                                  "changed since it was written"});
  page.Facts(TuningFacts(tuning));

  const json& table = ArrayField(tuning, "table");
  if (table.empty()) {
    page.Note("The manifest holds no tune table.");
  } else {
    AddTuneSections(page, table);
  }
  AddWeightSection(page, ObjectField(manifest, "weights"));

  page.Heading("Manifest");
  page.Facts({{"format_version", NumberText(manifest, "format_version")},
              {"written by qtune", OrDash(StringField(manifest, "qtune_version"))},
              {"created (UTC)", OrDash(StringField(manifest, "created_utc"))},
              {"archive sha256", OrDash(input.archive_sha256)},
              {"verified", input.verified ? "yes (.sha256 file matches)" : "no (--no-verify)"}});
  return page.Finish();
}

Status WriteCheckpointReport(const CheckpointReportInput& input, const std::string& output_path) {
  return WriteFileAtomic(output_path, RenderCheckpointReport(input));
}

}  // namespace qtune::report
