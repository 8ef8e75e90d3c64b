#include "measure/measure_executable.h"

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "measure/measure_worker.h"

namespace qtune::measure {
namespace {

namespace fs = std::filesystem;

bool IsExecutableFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

constexpr char kHow[] =
    "Measuring runs a child process: qtune-measure (installed in <prefix>/libexec/qtune/ by "
    "`cmake --install`, shipped by pip) or the qtune executable. Pass its path as "
    "options.qtune_binary (Python: qtune_binary=) or set $QTUNE_BINARY";

// The folder of the program or shared object this function's code is in.
std::string CodeDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&CodeDirectory), &info) != 0 && info.dli_fname != nullptr &&
      *info.dli_fname != '\0') {
    std::error_code ec;
    fs::path path = fs::canonical(info.dli_fname, ec);
    if (!ec) return path.parent_path().string();
  }
  return fs::path(ThisExecutable()).parent_path().string();
}

// Steps 3 and 4 of FindMeasureExecutable.
std::vector<std::string> LibraryCandidates() {
  const std::string dir = CodeDirectory();
  return {dir + "/../libexec/qtune/" + kMeasureExecutableName,
          dir + "/qtune_bin/" + kMeasureExecutableName, QTUNE_MEASURE_BUILD_PATH,
          QTUNE_MEASURE_INSTALL_PATH};
}

std::string QtuneOnThePath() {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string_view entry = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    std::string candidate = std::string(entry) + "/qtune";
    if (!entry.empty() && IsExecutableFile(candidate)) return candidate;
  }
  return "";
}

}  // namespace

StatusOr<std::string> FindMeasureExecutable(const std::string& given) {
  std::string chosen = given, where = "options.qtune_binary";
  if (chosen.empty()) {
    const char* env = std::getenv("QTUNE_BINARY");
    if (env != nullptr && *env != '\0') chosen = env, where = "$QTUNE_BINARY";
  }
  if (!chosen.empty()) {
    if (IsExecutableFile(chosen)) return chosen;
    return FailedPreconditionError(where + " '" + chosen + "' is not an executable file. " + kHow);
  }
  std::string looked;
  for (const std::string& candidate : LibraryCandidates()) {
    if (IsExecutableFile(candidate)) return candidate;
    looked += (looked.empty() ? "" : ", ") + candidate;
  }
  if (std::string qtune = QtuneOnThePath(); !qtune.empty()) return qtune;
  return FailedPreconditionError("no qtune-measure or qtune executable found (looked at " + looked +
                                 ", and qtune on the PATH). " + kHow);
}

std::string ThisExecutable() {
  char buffer[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string("qtune");
}

int ServeMeasureWorkerOnStdio(const char* program_name) {
  int reply_fd = dup(STDOUT_FILENO);
  if (reply_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::fprintf(stderr, "%s: cannot set up the reply stream: %s\n", program_name,
                 std::strerror(errno));
    return 1;
  }
  std::FILE* replies = fdopen(reply_fd, "w");
  if (replies == nullptr) {
    std::fprintf(stderr, "%s: cannot open the reply stream: %s\n", program_name,
                 std::strerror(errno));
    return 1;
  }
  int code = RunMeasureWorker(stdin, replies);
  std::fclose(replies);
  return code;
}

}  // namespace qtune::measure
