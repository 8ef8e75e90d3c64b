// A small writer of one self-contained HTML page: inline CSS, inline SVG, no scripts, no
// network references. Every text that came from a file goes through Escape() (names may
// hold < & " ').
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qtune::report {

// Escapes & < > " ' for HTML text and attribute values (double- or single-quoted).
std::string Escape(std::string_view text);

// A table of plain-text cells (the writer escapes them). `numeric` marks right-aligned
// columns.
struct HtmlTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> numeric;    // per column; missing entries are false
  std::vector<bool> highlight;  // per row (e.g. the chosen one); missing entries are false
};

// Builds the page in order. The result of Finish() is a complete HTML5 document.
class HtmlPage {
 public:
  // `title` is plain text; `subtitle` lines are plain text shown under it.
  HtmlPage(std::string_view title, const std::vector<std::string>& subtitle);

  void Heading(std::string_view text);    // a section heading (h2), plain text
  void Paragraph(std::string_view text);  // plain text
  void Note(std::string_view text);       // plain text, shown muted (missing data, hints)
  // Key/value facts as a compact definition list; plain text.
  void Facts(const std::vector<std::pair<std::string, std::string>>& facts);
  // `svg` is markup produced by svg_plot.h (trusted: it escapes its own text).
  void Figure(const std::string& svg);
  void Table(const HtmlTable& table);

  std::string Finish() const;

 private:
  std::string body_;
  std::string title_;
};

}  // namespace qtune::report
