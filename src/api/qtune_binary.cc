#include "api/qtune_binary.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace qtune::api_internal {
namespace {

bool IsExecutableFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

constexpr char kHow[] =
    "Autotune and Tune measure in a child `qtune measure-worker` process: set "
    "options.qtune_binary to the qtune executable, set $QTUNE_BINARY, or put qtune on the PATH "
    "(cmake --install puts it in <prefix>/bin)";

}  // namespace

StatusOr<std::string> FindQtuneBinary(const std::string& given) {
  std::string chosen = given, where = "options.qtune_binary";
  if (chosen.empty()) {
    const char* env = std::getenv("QTUNE_BINARY");
    if (env != nullptr && *env != '\0') chosen = env, where = "$QTUNE_BINARY";
  }
  if (!chosen.empty()) {
    if (IsExecutableFile(chosen)) return chosen;
    return FailedPreconditionError(where + " '" + chosen + "' is not an executable file. " + kHow);
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    std::string candidate = std::string(dir) + "/qtune";
    if (IsExecutableFile(candidate)) return candidate;
  }
  return FailedPreconditionError(std::string("no qtune executable found. ") + kHow);
}

}  // namespace qtune::api_internal
