#include "results/report/report_document.hpp"

#include "results/report/report_plots.hpp"
#include "results/store/text_io.hpp"

#include <filesystem>
#include <sstream>

namespace ddpscale {
namespace {

// Splits "a **b** c" into alternating plain and bold pieces (even index = plain).
std::vector<std::string> bold_spans(const std::string& text) {
  std::vector<std::string> pieces;
  size_t start = 0;
  for (;;) {
    const size_t marker = text.find("**", start);
    if (marker == std::string::npos) break;
    pieces.push_back(text.substr(start, marker - start));
    start = marker + 2;
  }
  pieces.push_back(text.substr(start));
  if (pieces.size() % 2 == 0) {  // an unpaired marker is text, not markup
    pieces[pieces.size() - 2] += "**" + pieces.back();
    pieces.pop_back();
  }
  return pieces;
}

std::string inline_markdown(const std::string& text) {
  const std::vector<std::string> pieces = bold_spans(text);
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) out += i % 2 ? "**" + markdown_escape(pieces[i]) + "**" : markdown_escape(pieces[i]);
  return out;
}

std::string inline_html(const std::string& text) {
  const std::vector<std::string> pieces = bold_spans(text);
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) out += i % 2 ? "<b>" + html_escape(pieces[i]) + "</b>" : html_escape(pieces[i]);
  return out;
}

bool right(const ReportTable& table, size_t column) {
  return column < table.right_aligned.size() && table.right_aligned[column];
}

void markdown_table(std::ostringstream& out, const ReportTable& table) {
  out << "|";
  for (const auto& cell : table.header) out << " " << inline_markdown(cell) << " |";
  out << "\n|";
  for (size_t c = 0; c < table.header.size(); ++c) out << (right(table, c) ? "---:|" : "---|");
  out << "\n";
  for (const auto& row : table.rows) {
    out << "|";
    for (const auto& cell : row) out << " " << inline_markdown(cell) << " |";
    out << "\n";
  }
  out << "\n";
}

void html_table(std::ostringstream& out, const ReportTable& table) {
  out << "<table>\n<thead><tr>";
  for (size_t c = 0; c < table.header.size(); ++c)
    out << (right(table, c) ? "<th class=\"num\">" : "<th>") << inline_html(table.header[c]) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out << "<tr>";
    for (size_t c = 0; c < row.size(); ++c)
      out << (right(table, c) ? "<td class=\"num\">" : "<td>") << inline_html(row[c]) << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

const char* kHtmlStyle = R"(<style>
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { border-bottom: 2px solid #ccc; } h2 { border-bottom: 1px solid #ddd; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 4px 8px; } th { background: #f2f2f2; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
</style>
)";

}  // namespace

ReportFigure figure_of(const PlotFiles& files, const std::string& caption) {
  ReportFigure figure;
  figure.caption = caption;
  figure.svg_file = "plots/" + std::filesystem::path(files.svg).filename().string();
  figure.png_file = "plots/" + std::filesystem::path(files.png).filename().string();
  figure.png_bytes = read_whole_file(files.png);
  return figure;
}

ReportBlock& ReportDocument::add(ReportBlock::Kind kind) {
  blocks_.emplace_back();
  blocks_.back().kind = kind;
  return blocks_.back();
}

void ReportDocument::heading(const std::string& text, int level) {
  ReportBlock& block = add(ReportBlock::Kind::heading);
  block.text = text;
  block.level = level;
}

void ReportDocument::paragraph(const std::string& text) { add(ReportBlock::Kind::paragraph).text = text; }
void ReportDocument::bullets(const std::vector<std::string>& items) { add(ReportBlock::Kind::bullets).items = items; }
void ReportDocument::table(const ReportTable& table) { add(ReportBlock::Kind::table).table = table; }
void ReportDocument::figure(const ReportFigure& figure) { add(ReportBlock::Kind::figure).figure = figure; }
void ReportDocument::preformatted(const std::string& text) { add(ReportBlock::Kind::preformatted).text = text; }

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string markdown_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '|': case '\\': case '`': case '*': case '_': case '[': case ']':
        out += '\\';
        out += c;
        break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\n': case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_markdown(const ReportDocument& document) {
  std::ostringstream out;
  if (!document.title.empty()) out << "# " << markdown_escape(document.title) << "\n\n";
  for (const ReportBlock& block : document.blocks()) {
    switch (block.kind) {
      case ReportBlock::Kind::heading:
        out << std::string(static_cast<size_t>(block.level), '#') << " " << markdown_escape(block.text) << "\n\n";
        break;
      case ReportBlock::Kind::paragraph: out << inline_markdown(block.text) << "\n\n"; break;
      case ReportBlock::Kind::bullets:
        for (const auto& item : block.items) out << "- " << inline_markdown(item) << "\n";
        out << "\n";
        break;
      case ReportBlock::Kind::table: markdown_table(out, block.table); break;
      case ReportBlock::Kind::figure:
        out << "![" << markdown_escape(block.figure.caption) << "](" << block.figure.svg_file << ")\n\n*"
            << markdown_escape(block.figure.caption) << "* ([PNG](" << block.figure.png_file << "))\n\n";
        break;
      case ReportBlock::Kind::preformatted: {
        // A fence longer than any backtick run inside, so stored text cannot close it.
        std::string fence = "```";
        while (block.text.find(fence) != std::string::npos) fence += '`';
        out << fence << "\n" << block.text << (block.text.empty() || block.text.back() != '\n' ? "\n" : "") << fence
            << "\n\n";
        break;
      }
    }
  }
  return out.str();
}

std::string render_html(const ReportDocument& document) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << html_escape(document.title) << "</title>\n" << kHtmlStyle << "</head>\n<body>\n";
  if (!document.title.empty()) out << "<h1>" << html_escape(document.title) << "</h1>\n";
  for (const ReportBlock& block : document.blocks()) {
    switch (block.kind) {
      case ReportBlock::Kind::heading:
        out << "<h" << block.level << ">" << html_escape(block.text) << "</h" << block.level << ">\n";
        break;
      case ReportBlock::Kind::paragraph: out << "<p>" << inline_html(block.text) << "</p>\n"; break;
      case ReportBlock::Kind::bullets:
        out << "<ul>\n";
        for (const auto& item : block.items) out << "<li>" << inline_html(item) << "</li>\n";
        out << "</ul>\n";
        break;
      case ReportBlock::Kind::table: html_table(out, block.table); break;
      case ReportBlock::Kind::figure:
        out << "<figure><img alt=\"" << html_escape(block.figure.caption) << "\" src=\"data:image/png;base64,"
            << base64_encode(block.figure.png_bytes) << "\"><figcaption>" << html_escape(block.figure.caption)
            << "</figcaption></figure>\n";
        break;
      case ReportBlock::Kind::preformatted: out << "<pre>" << html_escape(block.text) << "</pre>\n"; break;
    }
  }
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace ddpscale
