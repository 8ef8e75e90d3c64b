#include "cli/output_paths.h"

#include <sys/stat.h>

#include <cstdio>

#include "cli/exit_codes.h"

namespace qtune::cli {

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  if (a.empty() || b.empty()) return false;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string InputArgPath(const std::string& arg) {
  const size_t eq = arg.find('=');
  return eq == std::string::npos ? arg : arg.substr(eq + 1);
}

int CheckOutputIsNotAnInput(const std::string& option, const std::string& output_path,
                            const std::vector<std::string>& input_paths) {
  if (output_path.empty()) return kExitOk;
  for (const std::string& input : input_paths) {
    if (!SameFile(output_path, input)) continue;
    std::fprintf(stderr,
                 "qtune: error: %s %s is the input file %s (the same file%s); qtune does not "
                 "write over its inputs: choose another output path\n",
                 option.c_str(), output_path.c_str(), input.c_str(),
                 output_path == input ? "" : ", through a link or another spelling");
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace qtune::cli
