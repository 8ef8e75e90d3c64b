#include "cli/output_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

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

int CheckOutputWritable(const std::string& option, const std::string& output_path) {
  if (output_path.empty()) return kExitOk;
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "qtune: error: %s %s: %s\n", option.c_str(), output_path.c_str(),
                 why.c_str());
    return kExitUsage;
  };
  struct stat st {};
  if (::stat(output_path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return fail("is a directory; give a file name");
    if (::access(output_path.c_str(), W_OK) != 0) {
      return fail(std::string("exists and cannot be written (") + std::strerror(errno) +
                  "); choose another output path");
    }
  }
  std::filesystem::path parent = std::filesystem::path(output_path).parent_path();
  if (parent.empty()) parent = ".";
  if (::stat(parent.c_str(), &st) != 0) {
    return fail("the directory " + parent.string() + " does not exist; create it first");
  }
  if (!S_ISDIR(st.st_mode)) return fail(parent.string() + " is not a directory");
  // Writing goes through a temporary file beside the output, then a rename: the directory
  // must be writable even when the file is.
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    return fail("the directory " + parent.string() + " is not writable (" + std::strerror(errno) +
                "); choose another output path");
  }
  return kExitOk;
}

int CheckDirWritable(const std::string& option, const std::string& dir) {
  if (dir.empty()) return kExitOk;
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "qtune: error: %s %s: %s; choose another folder\n", option.c_str(),
                 dir.c_str(), why.c_str());
    return kExitUsage;
  };
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail("cannot be created (" + ec.message() + ")");
  if (!std::filesystem::is_directory(dir, ec)) return fail("is not a directory");
  std::string probe = (std::filesystem::path(dir) / ".qtune-write-check.XXXXXX").string();
  int fd = ::mkstemp(probe.data());
  if (fd < 0) return fail(std::string("is not writable (") + std::strerror(errno) + ")");
  ::close(fd);
  ::unlink(probe.c_str());
  return kExitOk;
}

}  // namespace qtune::cli
