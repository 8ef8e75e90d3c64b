// The docs check: every fenced command block in README.md and docs/*.md either runs here,
// as written, from a copy of the repository root, or is marked as not run with a reason.
// The convention (docs/cli.md, "Documentation examples"):
//
//   <!-- docs-check: run -->                           run the block; it must exit 0
//   <!-- docs-check: run expect="accuracy quantized 0.9035" setup="qtune quantize ..." -->
//                                                       ... and print each expect= text;
//                                                       setup= runs first, unseen
//   <!-- docs-check: not-run REASON -->                 not run (REASON says why)
//
// on the line before the opening fence. A block is a command block when its fence has no
// info string or bash/sh/shell/console, and a line starts with a command (qtune,
// build/..., make, node, ...). Output goes in ```text blocks. In a block with "$ " prompts
// only the prompted lines (and their continuations) run. When run: `qtune` and
// build/src/cli/qtune are the binary under test, models/ recipes/ tools/ are the
// repository's, and /tmp/ is a fresh folder per block.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace qtune {
namespace {

namespace fs = std::filesystem;

struct DocBlock {
  std::string file;  // relative to the repository root
  int line = 0;      // of the opening fence
  std::string info;  // the fence's info string
  std::string text;
  std::string marker;  // the docs-check comment's body, "" when none
};

// gtest prints a parameter with this (ctest -N, failures): where the block is.
void PrintTo(const DocBlock& block, std::ostream* os) { *os << block.file << ":" << block.line; }

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> DocFiles() {
  const fs::path root = QTUNE_SOURCE_DIR;
  std::vector<std::string> files = {"README.md"};
  std::vector<std::string> docs;
  for (const auto& entry : fs::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md")
      docs.push_back("docs/" + entry.path().filename().string());
  }
  std::sort(docs.begin(), docs.end());
  files.insert(files.end(), docs.begin(), docs.end());
  return files;
}

std::vector<DocBlock> ParseBlocks(const std::string& file) {
  std::vector<DocBlock> blocks;
  std::istringstream in(ReadText(fs::path(QTUNE_SOURCE_DIR) / file));
  std::string line, previous_nonblank;
  int number = 0;
  DocBlock* open = nullptr;
  static const std::regex kMarker(R"(^<!--\s*docs-check:\s*(.*?)\s*-->$)");
  while (std::getline(in, line)) {
    ++number;
    const std::string trimmed = Trim(line);
    if (open == nullptr) {
      if (trimmed.rfind("```", 0) == 0) {
        DocBlock block;
        block.file = file;
        block.line = number;
        const size_t info_at = trimmed.find_first_not_of('`');
        block.info = info_at == std::string::npos ? "" : Trim(trimmed.substr(info_at));
        std::smatch m;
        if (std::regex_match(previous_nonblank, m, kMarker)) block.marker = m[1];
        blocks.push_back(block);
        open = &blocks.back();
      }
      if (!trimmed.empty()) previous_nonblank = trimmed;
      continue;
    }
    if (trimmed == "```") {
      open = nullptr;
      previous_nonblank = trimmed;
      continue;
    }
    open->text += line + "\n";
  }
  return blocks;
}

// "$ qtune ..." -> "qtune ..."; leading blanks removed.
std::string StripPrompt(const std::string& line) {
  std::string t = Trim(line);
  return t.rfind("$ ", 0) == 0 ? t.substr(2) : t;
}

bool IsCommandLine(const std::string& raw) {
  std::istringstream words(StripPrompt(raw));
  std::string word;
  while (words >> word) {
    if (word[0] == '#') return false;
    const size_t eq = word.find('=');
    if (eq != std::string::npos && eq > 0 && word.find('/') > eq) continue;  // VAR=value
    static const char* kCommands[] = {"qtune", "make", "node", "cmake", "ctest",
                                      "git",   "npm",  "bash", "ninja"};
    for (const char* c : kCommands) {
      if (word == c) return true;
    }
    for (const char* prefix : {"build/", "./", "bench/", "tools/", "scripts/", "examples/"}) {
      if (word.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }
  return false;
}

bool IsCommandBlock(const DocBlock& block) {
  if (!(block.info.empty() || block.info == "bash" || block.info == "sh" || block.info == "shell" ||
        block.info == "console")) {
    return false;
  }
  std::istringstream in(block.text);
  std::string line;
  while (std::getline(in, line)) {
    if (IsCommandLine(line)) return true;
  }
  return false;
}

std::vector<DocBlock> AllCommandBlocks() {
  std::vector<DocBlock> out;
  for (const std::string& file : DocFiles()) {
    for (DocBlock& block : ParseBlocks(file)) {
      if (IsCommandBlock(block)) out.push_back(std::move(block));
    }
  }
  return out;
}

bool IsRun(const DocBlock& block) { return block.marker.rfind("run", 0) == 0; }

// The values of every key="value" in the marker.
std::vector<std::string> MarkerValues(const std::string& marker, const std::string& key) {
  std::vector<std::string> values;
  const std::regex attribute(key + R"re(="([^"]*)")re");
  for (std::sregex_iterator it(marker.begin(), marker.end(), attribute), end; it != end; ++it) {
    values.push_back((*it)[1]);
  }
  return values;
}

// The shell script a block runs: the prompted lines when it has prompts, else all of it.
std::string Script(const DocBlock& block) {
  std::istringstream in(block.text);
  std::string line, script;
  bool prompts = block.text.find("$ ") != std::string::npos;
  bool continued = false;
  while (std::getline(in, line)) {
    const bool prompted = Trim(line).rfind("$ ", 0) == 0;
    if (prompts && !prompted && !continued) continue;
    script += (prompted ? StripPrompt(line) : line) + "\n";
    continued = !Trim(line).empty() && Trim(line).back() == '\\';
  }
  return script;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

TEST(DocsCheckTest, EveryCommandBlockIsRunOrMarkedNotRun) {
  std::vector<DocBlock> blocks = AllCommandBlocks();
  ASSERT_GT(blocks.size(), 10u) << "the parser found too few command blocks";
  int run = 0;
  for (const DocBlock& block : blocks) {
    const std::string where = block.file + ":" + std::to_string(block.line);
    if (IsRun(block)) {
      ++run;
      continue;
    }
    if (block.marker.rfind("not-run", 0) == 0) {
      EXPECT_FALSE(Trim(block.marker.substr(7)).empty())
          << where << ": <!-- docs-check: not-run --> needs a reason";
      continue;
    }
    ADD_FAILURE() << where << ": a command block that is neither run nor marked. Put "
                  << "<!-- docs-check: run --> or <!-- docs-check: not-run REASON --> on the "
                  << "line before the fence (docs/cli.md, \"Documentation examples\"); output "
                  << "goes in a ```text block.\n"
                  << block.text;
  }
  EXPECT_GE(run, 5) << "most cheap examples should run";
}

TEST(DocsCheckTest, CommandLinesAreRecognized) {
  EXPECT_TRUE(IsCommandLine("qtune quantize m.onnx"));
  EXPECT_TRUE(IsCommandLine("$ qtune eval a b"));
  EXPECT_TRUE(IsCommandLine("build/src/cli/qtune inspect m.onnx"));
  EXPECT_TRUE(IsCommandLine("QTUNE_X=1 ./build/tests/x"));
  EXPECT_FALSE(IsCommandLine("M=models/fmnist"));
  EXPECT_FALSE(IsCommandLine("# a comment: qtune run"));
  EXPECT_FALSE(IsCommandLine("samples            2000"));
  EXPECT_FALSE(IsCommandLine("cli ─▶ tune ─▶ autotune"));
  DocBlock output{"x.md", 1, "text", "node  op  quant\n", ""};
  EXPECT_FALSE(IsCommandBlock(output));
  DocBlock prompted{"x.md", 1, "", "$ qtune eval a \\\n    --data d\nsamples 2\n", "run"};
  EXPECT_EQ(Script(prompted), "qtune eval a \\\n    --data d\n");
}

class DocsRunTest : public ::testing::TestWithParam<DocBlock> {};

// Runs `script` with bash in `dir`; returns the exit status, output in *out.
int RunScript(const fs::path& dir, const std::string& name, const std::string& script,
              std::string* out) {
  const fs::path file = dir / (name + ".sh");
  std::ofstream(file) << script;
  const fs::path log = dir / (name + ".log");
  const std::string command = "cd '" + dir.string() + "' && PATH='" + (dir / "bin").string() +
                              "':\"$PATH\" bash -e -o pipefail '" + file.string() + "' > '" +
                              log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  *out = ReadText(log);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_P(DocsRunTest, RunsAsWritten) {
  const DocBlock& block = GetParam();
  const std::string where = block.file + ":" + std::to_string(block.line);
  std::string pattern = (fs::temp_directory_path() / "qtune_docs_XXXXXX").string();
  const fs::path dir = mkdtemp(pattern.data());
  const fs::path root = QTUNE_SOURCE_DIR;
  fs::create_directories(dir / "bin");
  fs::create_directories(dir / "tmp");
  fs::create_directories(dir / "build/src/cli");
  fs::create_symlink(QTUNE_BINARY, dir / "bin/qtune");
  fs::create_symlink(QTUNE_BINARY, dir / "build/src/cli/qtune");
  for (const char* shared : {"models", "recipes", "tools", "docs"}) {
    fs::create_symlink(root / shared, dir / shared);
  }
  auto localize = [&](const std::string& s) {
    return Replace(s, "/tmp/", (dir / "tmp").string() + "/");
  };
  std::string out;
  for (const std::string& setup : MarkerValues(block.marker, "setup")) {
    ASSERT_EQ(RunScript(dir, "setup", localize(setup) + "\n", &out), 0)
        << where << ": setup failed: " << setup << "\n"
        << out;
  }
  const std::string script = localize(Script(block));
  const int status = RunScript(dir, "block", script, &out);
  EXPECT_EQ(status, 0) << where << " failed as written:\n" << script << "\n--- output:\n" << out;
  for (const std::string& expect : MarkerValues(block.marker, "expect")) {
    EXPECT_NE(out.find(expect), std::string::npos)
        << where << ": the doc quotes '" << expect << "', the command printed:\n"
        << out;
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

std::vector<DocBlock> RunBlocks() {
  std::vector<DocBlock> out;
  for (DocBlock& block : AllCommandBlocks()) {
    if (IsRun(block)) out.push_back(std::move(block));
  }
  return out;
}

// "docs_quantize_md_2": the second run block of docs/quantize.md. Not the line number, so
// editing prose above a block keeps the test's name.
std::string BlockName(const ::testing::TestParamInfo<DocBlock>& info) {
  static const std::vector<DocBlock> blocks = RunBlocks();
  int ordinal = 0;
  for (size_t i = 0; i <= info.index && i < blocks.size(); ++i) {
    ordinal += blocks[i].file == info.param.file;
  }
  std::string name = info.param.file + "_" + std::to_string(ordinal);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Docs, DocsRunTest, ::testing::ValuesIn(RunBlocks()), BlockName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DocsRunTest);

}  // namespace
}  // namespace qtune
