// Helpers shared by the report tests: the fmnist inputs, reading files, and the checks that
// every report page must pass.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

namespace qtune::report {

inline const std::string kFmnistModel =
    std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
inline const std::string kFmnistCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Marks drawn in the plots: bars, points and lines (the white backgrounds excluded).
inline size_t CountPlotMarks(const std::string& html) {
  return CountOf(html, "<rect x=\"") - CountOf(html, "fill=\"#ffffff\"") +
         CountOf(html, "<circle") + CountOf(html, "<path d=\"M");
}

// One self-contained HTML page: a document with inline SVG plots that have content, and
// nothing that reaches out (no scripts, no links, no external images or fonts).
inline void ExpectSelfContainedPage(const std::string& html) {
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_GE(CountOf(html, "<svg"), 1u);
  EXPECT_EQ(CountOf(html, "<svg"), CountOf(html, "</svg>"));
  EXPECT_GE(CountPlotMarks(html), 3u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=|url\(|@import|https?:)")))
      << "the page references something outside itself";
}

}  // namespace qtune::report
