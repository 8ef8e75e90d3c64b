// The benchmark command template (`--benchmark-command 'tool --onnx={model} ...'`) as an
// argument vector: split into words once, placeholders substituted into each word as
// plain text, run without a shell (docs/autotune.md, "The command template").
//
// Splitting rules (a small subset of the shell's, for the template text only):
//   * spaces, tabs and newlines outside quotes separate words;
//   * '...' keeps everything up to the next ' as it is (no escapes inside);
//   * "..." keeps everything up to the next unescaped "; inside it \" and \\ stand for
//     " and \, any other backslash is kept as it is;
//   * outside quotes, a backslash makes the next character literal (a space, a quote...);
//   * quotes may join parts of one word: --name="a b"'c' is the one word --name=a bc.
// Since nothing runs a shell, characters that mean something to a shell are refused when
// they stand unquoted: ; | & < > ( ) $ and ` (quote them to pass them to the tool as they
// are). An unterminated quote or a trailing backslash is refused too.
//
// Placeholders ({model}, {reference}) are replaced inside each word after splitting, so a
// substituted value is always part of exactly one argument and is never parsed again,
// whatever it holds (spaces, quotes, ;, $(...), backticks, newlines).
//
// A shell can still be run explicitly, e.g. sh -c 'tool "$1" | tail -1' sh {model}: the
// value reaches the script as "$1", never as script text. A placeholder inside the script
// word of sh -c (or bash, dash, zsh, ksh, ash) would be parsed by that shell, so it is
// refused with that advice.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace qtune::measure {

// The words of `text` by the rules above. InvalidArgument naming the character and its
// offset for an unterminated quote, a trailing backslash or an unquoted shell character;
// also for an empty template or a placeholder inside a `sh -c` script.
StatusOr<std::vector<std::string>> SplitCommandTemplate(std::string_view text);

// `words` with each occurrence of each key of `values` (e.g. "{model}") replaced by its
// value, as plain text. A value is never searched for placeholders again.
std::vector<std::string> SubstitutePlaceholders(const std::vector<std::string>& words,
                                                const std::map<std::string, std::string>& values);

// `argv` as one line a person (or /bin/sh) can read back: words that need it are
// single-quoted, others stand bare. For logs and error details only; never run.
std::string ArgvToDisplay(const std::vector<std::string>& argv);

}  // namespace qtune::measure
