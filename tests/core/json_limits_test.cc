// ParseUntrustedJson and DumpJson (core/json_limits.h): nesting and size are checked
// before nlohmann parses, strings do not count towards the depth, and dumping text with
// bytes that are not UTF-8 replaces them instead of throwing.
#include "core/json_limits.h"

#include <gtest/gtest.h>

#include <string>

namespace qtune {
namespace {

std::string Nested(int depth, char open = '[', char close = ']') {
  return std::string(static_cast<size_t>(depth), open) +
         std::string(static_cast<size_t>(depth), close);
}

TEST(JsonLimitsTest, ParsesNestingUpToTheLimit) {
  auto json = ParseUntrustedJson(Nested(64), "test.json");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_TRUE(json->is_array());
}

TEST(JsonLimitsTest, RefusesNestingPastTheLimitBeforeParsing) {
  auto json = ParseUntrustedJson(Nested(65), "test.json");
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(json.status().message().find("test.json"), std::string::npos);
  EXPECT_NE(json.status().message().find("deeper than 64"), std::string::npos);
  EXPECT_NE(json.status().message().find("at byte 64"), std::string::npos);
}

TEST(JsonLimitsTest, HundredThousandNestedArraysAreRefusedNotACrash) {
  std::string text = Nested(100000);
  EXPECT_FALSE(ParseUntrustedJson(text, "manifest.json").ok());
  // Unbalanced (never closed) and objects count the same.
  EXPECT_FALSE(ParseUntrustedJson(std::string(100000, '['), "x").ok());
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  EXPECT_FALSE(ParseUntrustedJson(objects, "x").ok());
}

TEST(JsonLimitsTest, BracketsInsideStringsAndEscapedQuotesDoNotCount) {
  std::string text = "{\"a\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') +
                     "\", \"b\": [1, \"]]]\\\\\", [2]]}";
  auto json = ParseUntrustedJson(text, "x", JsonLimits{.max_depth = 3});
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ((*json)["b"][2][0], 2);
  EXPECT_FALSE(CheckJsonLimits(text, "x", JsonLimits{.max_depth = 2}).ok());
}

TEST(JsonLimitsTest, ClosingBracketsFirstDoNotBuyDepth) {
  std::string text = std::string(10, ']') + Nested(3);
  auto status = CheckJsonLimits(text, "x", JsonLimits{.max_depth = 2});
  EXPECT_FALSE(status.ok());
}

TEST(JsonLimitsTest, RefusesTextLargerThanTheLimit) {
  auto json = ParseUntrustedJson("[1, 2, 3]", "x", JsonLimits{.max_bytes = 4});
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.status().message().find("larger than the 4 bytes"), std::string::npos);
}

TEST(JsonLimitsTest, InvalidJsonIsAnErrorThatSaysWhere) {
  auto json = ParseUntrustedJson("{\"a\": tru}", "job 17-0");
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(json.status().message().find("job 17-0: not valid JSON"), std::string::npos);
  EXPECT_NE(json.status().message().find("column"), std::string::npos);
  EXPECT_EQ(json.status().message().find("[json.exception"), std::string::npos);
  EXPECT_FALSE(ParseUntrustedJson("", "x").ok());
  EXPECT_FALSE(ParseUntrustedJson("\"\xe9\"", "x").ok()) << "invalid UTF-8 inside a string";
}

TEST(JsonLimitsTest, DumpReplacesBytesThatAreNotUtf8) {
  nlohmann::json j = {{"error", std::string("caf\xe9 failed")}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what DumpJson avoids
  std::string text = DumpJson(j);
  EXPECT_EQ(text, "{\"error\":\"caf\xef\xbf\xbd failed\"}");
  auto back = ParseUntrustedJson(text, "x");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(DumpJson(j, 2), "{\n  \"error\": \"caf\xef\xbf\xbd failed\"\n}");
}

}  // namespace
}  // namespace qtune
