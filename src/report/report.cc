#include "report/report.h"

#include <filesystem>

#include "core/file_io.h"
#include "core/json_limits.h"
#include "report/autotune_log.h"
#include "report/autotune_report.h"
#include "report/json_fields.h"
#include "report/quantize_report.h"
#include "report/tune_report.h"

namespace qtune::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kMaxInputBytes = int64_t{256} << 20;
constexpr char kAccepted[] =
    "qtune report reads an autotune work dir (or its report.json), the JSON of "
    "`qtune tune --json` or of `qtune quantize --json`";

Status CheckVersion(const std::string& path, const json& data, const char* what) {
  auto version = NumberField(data, "version");
  if (version && *version > 1) {
    return UnimplementedError(path + ": " + what + " version " + std::to_string(int(*version)) +
                              " is newer than this qtune reads (1); use a newer qtune report");
  }
  return Status();
}

StatusOr<ReportInput> Identify(const std::string& path, json data) {
  ReportInput input;
  input.source = path;
  if (!data.is_object()) {
    return InvalidArgumentError(path + ": a JSON " + std::string(data.type_name()) +
                                ", not an object; " + kAccepted);
  }
  const std::string format = StringField(data, "format");
  if (format == "qtune-autotune-report") {
    RETURN_IF_ERROR(CheckVersion(path, data, "autotune report"));
    input.kind = ReportKind::kAutotune;
    const fs::path log = fs::path(path).parent_path() / "state.jsonl";
    std::error_code ec;
    if (fs::is_regular_file(log, ec)) input.state_log = log.string();
  } else if (!format.empty()) {
    return InvalidArgumentError(path + ": a '" + format + "' file; " + kAccepted);
  } else if (data.contains("table") && data["table"].is_array()) {
    input.kind = ReportKind::kTune;
  } else if (data.contains("layers") && data["layers"].is_array()) {
    RETURN_IF_ERROR(CheckVersion(path, data, "quantize summary"));
    input.kind = ReportKind::kQuantize;
  } else {
    return InvalidArgumentError(path +
                                ": JSON with neither \"format\": \"qtune-autotune-report\", a "
                                "\"table\" (tune) nor \"layers\" (quantize); " +
                                kAccepted);
  }
  input.data = std::move(data);
  return input;
}

}  // namespace

const char* ReportKindName(ReportKind kind) {
  switch (kind) {
    case ReportKind::kAutotune:
      return "autotune";
    case ReportKind::kTune:
      return "tune";
    case ReportKind::kQuantize:
      return "quantize";
  }
  return "?";
}

StatusOr<ReportInput> LoadReportInput(const std::string& path) {
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    file = (fs::path(path) / "report.json").string();
    if (!fs::exists(file, ec)) {
      return NotFoundError(path + ": a folder without report.json; " + std::string(kAccepted) +
                           " (an autotune work dir holds report.json once the run has ended)");
    }
  }
  ASSIGN_OR_RETURN(std::string text, ReadFile(file, kMaxInputBytes));
  RETURN_IF_ERROR(CheckJsonLimits(text, file));  // nested too deep: said as such
  StatusOr<json> data = ParseUntrustedJson(text, file);
  if (!data.ok()) return DataLossError(file + ": not JSON; " + std::string(kAccepted));
  return Identify(file, std::move(*data));
}

StatusOr<std::string> RenderReport(const ReportInput& input) {
  try {
    switch (input.kind) {
      case ReportKind::kAutotune: {
        if (input.state_log.empty()) return RenderAutotuneReport(input.data, nullptr, input.source);
        auto log = ReadAutotuneLog(input.state_log);
        if (!log.ok()) {
          // The report still has every scheme; only the time axis is lost.
          return RenderAutotuneReport(input.data, nullptr, input.source,
                                      "state log not used: " + log.status().message());
        }
        return RenderAutotuneReport(input.data, &*log, input.source);
      }
      case ReportKind::kTune:
        return RenderTuneReport(input.data, input.source);
      case ReportKind::kQuantize:
        return RenderQuantizeReport(input.data, input.source);
    }
  } catch (const json::exception& e) {
    return DataLossError(input.source + ": malformed " + ReportKindName(input.kind) + " JSON (" +
                         e.what() + ")");
  }
  return InternalError("unknown report kind");
}

StatusOr<ReportKind> WriteReport(const std::string& input_path, const std::string& output_path) {
  ASSIGN_OR_RETURN(ReportInput input, LoadReportInput(input_path));
  ASSIGN_OR_RETURN(std::string html, RenderReport(input));
  RETURN_IF_ERROR(WriteFileAtomic(output_path, html));
  return input.kind;
}

Status WriteTuneReport(const json& tune_result, const std::string& output_path) {
  ReportInput input;
  input.kind = ReportKind::kTune;
  input.source = "qtune tune";
  input.data = tune_result;
  ASSIGN_OR_RETURN(std::string html, RenderReport(input));
  return WriteFileAtomic(output_path, html);
}

}  // namespace qtune::report
