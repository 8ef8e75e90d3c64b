#include "measure/command_template.h"

#include <fmt/format.h>

#include <array>
#include <cstring>

namespace qtune::measure {
namespace {

constexpr std::string_view kShellCharacters = ";|&<>()$`";
constexpr std::array<std::string_view, 2> kPlaceholders = {"{model}", "{reference}"};
constexpr std::array<std::string_view, 7> kShells = {"sh",  "bash", "dash", "zsh",
                                                     "ksh", "ash",  "mksh"};

std::string Where(std::string_view text, size_t at) {
  return fmt::format("the benchmark command '{}', at character {}", text, at + 1);
}

bool HasPlaceholder(std::string_view word) {
  for (std::string_view p : kPlaceholders) {
    if (word.find(p) != std::string_view::npos) return true;
  }
  return false;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The index of the script word of `sh [-options] -c SCRIPT ...`, or 0 when `words` is not
// a shell given -c.
size_t ShellScriptIndex(const std::vector<std::string>& words) {
  bool is_shell = false;
  for (std::string_view shell : kShells) is_shell = is_shell || BaseName(words[0]) == shell;
  if (!is_shell) return 0;
  bool has_c = false;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") return has_c && i + 1 < words.size() ? i + 1 : 0;
    if (w.size() > 1 && (w[0] == '-' || w[0] == '+') && w[1] != '-') {
      has_c = has_c || w.find('c') != std::string::npos;
      continue;
    }
    return has_c ? i : 0;
  }
  return 0;
}

bool NeedsQuoting(std::string_view word) {
  if (word.empty()) return true;
  for (char c : word) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 std::strchr("-_./=:,+@%{}", c) != nullptr;
    if (!plain) return true;
  }
  return false;
}

}  // namespace

StatusOr<std::vector<std::string>> SplitCommandTemplate(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 == text.size()) {
        return InvalidArgumentError(Where(text, i) +
                                    ": a backslash ends it; escape a character after it or "
                                    "remove it");
      }
      word += text[++i];
    } else if (c == '\'') {
      size_t end = text.find('\'', i + 1);
      if (end == std::string_view::npos) {
        return InvalidArgumentError(Where(text, i) + ": this ' is never closed");
      }
      word.append(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() && (text[j + 1] == '"' || text[j + 1] == '\\')) {
          ++j;
        }
        word += text[j];
      }
      if (j == text.size())
        return InvalidArgumentError(Where(text, i) + ": this \" is never closed");
      i = j;
    } else if (kShellCharacters.find(c) != std::string_view::npos) {
      return InvalidArgumentError(fmt::format(
          "{}: '{}' means something to a shell, but the command runs without one; quote it to "
          "pass it to the tool as it is, or run a shell explicitly with the paths as arguments: "
          "sh -c 'tool \"$1\" ...' sh {{model}}",
          Where(text, i), c));
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return InvalidArgumentError("the benchmark command is empty");
  if (size_t script = ShellScriptIndex(words); script != 0 && HasPlaceholder(words[script])) {
    return InvalidArgumentError(fmt::format(
        "the benchmark command '{}' puts a placeholder inside the script of {} -c, where the "
        "shell would parse the path as code; pass it as an argument instead: {} -c '... \"$1\" "
        "...' sh {{model}}",
        text, words[0], words[0]));
  }
  return words;
}

std::vector<std::string> SubstitutePlaceholders(const std::vector<std::string>& words,
                                                const std::map<std::string, std::string>& values) {
  std::vector<std::string> out;
  out.reserve(words.size());
  for (const std::string& word : words) {
    std::string result;
    for (size_t i = 0; i < word.size();) {
      bool replaced = false;
      for (const auto& [placeholder, value] : values) {
        if (!placeholder.empty() && word.compare(i, placeholder.size(), placeholder) == 0) {
          result += value;
          i += placeholder.size();
          replaced = true;
          break;
        }
      }
      if (!replaced) result += word[i++];
    }
    out.push_back(std::move(result));
  }
  return out;
}

std::string ArgvToDisplay(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    if (!line.empty()) line += ' ';
    if (!NeedsQuoting(word)) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace qtune::measure
