// One rule for every qtune command that writes a file: never write over a file the same
// command reads (`qtune quantize m.onnx -o m.onnx` would destroy the user's model).
#pragma once

#include <string>
#include <vector>

namespace qtune::cli {

// True when `a` and `b` name the same existing file: same device and inode, so also
// through symbolic links, hard links and different spellings ("./m.onnx", "dir/../m.onnx").
// False when either does not exist.
bool SameFile(const std::string& a, const std::string& b);

// The file part of an input argument: "NAME=FILE.npy" -> "FILE.npy", else the argument.
std::string InputArgPath(const std::string& arg);

// Checks that `output_path` (the value of option `option`, e.g. "-o") is none of
// `input_paths`. Returns kExitOk, or prints "qtune: error: ..." naming both and returns
// kExitUsage. An empty output_path (nothing written) is OK.
int CheckOutputIsNotAnInput(const std::string& option, const std::string& output_path,
                            const std::vector<std::string>& input_paths);

// Checks, before any work, that `output_path` can be written: its directory exists and is
// writable, and the path is not a directory nor an existing read-only file. Returns
// kExitOk, or prints "qtune: error: OPTION PATH: ..." saying what to do and returns
// kExitUsage. Creates nothing. An empty output_path (nothing written) is OK.
int CheckOutputWritable(const std::string& option, const std::string& output_path);

// Checks, before any work, that the folder `dir` (the value of `option`, e.g.
// "--work-dir") can be written: creates it (and its parents) when missing, then creates
// and removes a probe file in it, so the check holds for root too (a read-only file
// system, a parent that is a regular file). Returns kExitOk, or prints "qtune: error:
// OPTION DIR: ..." saying what to do and returns kExitUsage. An empty `dir` is OK.
int CheckDirWritable(const std::string& option, const std::string& dir);

}  // namespace qtune::cli
