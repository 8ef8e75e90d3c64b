// The benchmark command template: split into words once, placeholders substituted into
// words as plain text, displayed quoted (command_template.h).
#include "measure/command_template.h"

#include <gtest/gtest.h>

namespace qtune::measure {
namespace {

using Words = std::vector<std::string>;

Words Split(std::string_view text) {
  auto words = SplitCommandTemplate(text);
  EXPECT_TRUE(words.ok()) << text << ": " << words.status().ToString();
  return words.ok() ? *words : Words{};
}

std::string SplitError(std::string_view text) {
  auto words = SplitCommandTemplate(text);
  EXPECT_FALSE(words.ok()) << text << " was accepted";
  return words.ok() ? "" : words.status().message();
}

TEST(CommandTemplateTest, WhitespaceSeparatesWords) {
  EXPECT_EQ(Split("trtexec  --onnx={model}\t--iterations=100\n"),
            (Words{"trtexec", "--onnx={model}", "--iterations=100"}));
}

TEST(CommandTemplateTest, QuotesAndBackslashesFollowTheShellsRules) {
  EXPECT_EQ(Split("tool 'a b' \"c d\" e\\ f"), (Words{"tool", "a b", "c d", "e f"}));
  // Parts join into one word; '' and "" are empty words.
  EXPECT_EQ(Split("tool --name=\"a b\"'c' '' \"\""), (Words{"tool", "--name=a bc", "", ""}));
  // Inside '...' nothing is special; inside "..." only \" and \\ are escapes.
  EXPECT_EQ(Split("tool '$(x) \\n \"' \"\\\" \\\\ \\n $(y) `z`\""),
            (Words{"tool", "$(x) \\n \"", "\" \\ \\n $(y) `z`"}));
  EXPECT_EQ(Split("tool \\' \\\" \\$"), (Words{"tool", "'", "\"", "$"}));
}

TEST(CommandTemplateTest, UnterminatedQuotesAndTrailingBackslashAreRefused) {
  EXPECT_NE(SplitError("tool 'a {model}").find("never closed"), std::string::npos);
  EXPECT_NE(SplitError("tool \"a {model}").find("never closed"), std::string::npos);
  EXPECT_NE(SplitError("tool {model} \\").find("backslash"), std::string::npos);
  EXPECT_NE(SplitError("  ").find("empty"), std::string::npos);
}

TEST(CommandTemplateTest, UnquotedShellCharactersAreRefusedWithTheWayToUseAShell) {
  for (const char* text :
       {"tool {model}; echo", "tool {model} | tail -1", "tool {model} && x", "tool {model} > out",
        "tool $(pwd)/{model}", "tool `pwd`/{model}", "tool $HOME {model}", "(tool {model})"}) {
    std::string message = SplitError(text);
    EXPECT_NE(message.find("without one"), std::string::npos) << text << ": " << message;
    EXPECT_NE(message.find("sh -c"), std::string::npos) << message;
  }
  // Quoted, they are the tool's.
  EXPECT_EQ(Split("tool '; | && > $(x) `y`' {model}"),
            (Words{"tool", "; | && > $(x) `y`", "{model}"}));
}

TEST(CommandTemplateTest, PlaceholderInsideAShellScriptIsRefused) {
  for (const char* text :
       {"sh -c 'tool {model}'", "bash -ec 'tool \"{model}\"' bash",
        "/bin/dash -e -c 'tool {reference}' x {model}", "sh -c -- 'tool {model}'"}) {
    std::string message = SplitError(text);
    EXPECT_NE(message.find("\"$1\""), std::string::npos) << text << ": " << message;
  }
  // As the script's arguments the paths are data.
  EXPECT_EQ(Split("sh -c 'tool \"$1\" \"$2\"' sh {model} {reference}"),
            (Words{"sh", "-c", "tool \"$1\" \"$2\"", "sh", "{model}", "{reference}"}));
  // A script file given to sh is not a -c script.
  EXPECT_EQ(Split("sh bench.sh {model}"), (Words{"sh", "bench.sh", "{model}"}));
}

// The templates docs/autotune.md shows ("The command template"), as the tuner sees them.
TEST(CommandTemplateTest, DocsExamplesSplitAsDocumented) {
  EXPECT_EQ(
      Split("sh -c \"scp \\\"$1\\\" board:/tmp/m.onnx && ssh board trtexec --onnx=/tmp/m.onnx\" "
            "sh {model}"),
      (Words{"sh", "-c", "scp \"$1\" board:/tmp/m.onnx && ssh board trtexec --onnx=/tmp/m.onnx",
             "sh", "{model}"}));
  EXPECT_EQ(Split("sh -c 'tool \"$1\" 2>&1 | tail -1' sh {model}"),
            (Words{"sh", "-c", "tool \"$1\" 2>&1 | tail -1", "sh", "{model}"}));
  EXPECT_EQ(Split("trtexec --onnx={model} --iterations=100"),
            (Words{"trtexec", "--onnx={model}", "--iterations=100"}));
}

TEST(CommandTemplateTest, SubstitutedValuesAreNeverParsedAgain) {
  const std::string hostile = "a b'c\"d;e $(touch x) `touch y` \n {reference}";
  Words argv = SubstitutePlaceholders(Split("tool --onnx={model} \"{reference}\" {model}{model}"),
                                      {{"{model}", hostile}, {"{reference}", "r.onnx"}});
  EXPECT_EQ(argv, (Words{"tool", "--onnx=" + hostile, "r.onnx", hostile + hostile}));
}

TEST(CommandTemplateTest, DisplayQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(ArgvToDisplay({"trtexec", "--onnx=/tmp/m.onnx", "a b", "it's", ""}),
            "trtexec --onnx=/tmp/m.onnx 'a b' 'it'\\''s' ''");
  // What is displayed splits back into the same words.
  Words hostile = {"sh", "-c", "echo \"$1\"", "sh", "a'b \"c\" $(d)\n`e`"};
  EXPECT_EQ(Split(ArgvToDisplay(hostile)), hostile);
}

}  // namespace
}  // namespace qtune::measure
