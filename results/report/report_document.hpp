// The report as a list of blocks (headings, paragraphs, tables, figures), built once and
// rendered twice: Markdown for GitHub and self-contained HTML for a browser. Keeping the
// two renderers apart from the content means the two files can never say different things.
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

struct ReportTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each as long as header
  std::vector<bool> right_aligned;             // per column; empty = all left
};

struct ReportFigure {
  std::string caption;
  std::string svg_file;   // relative to the report folder
  std::string png_file;   // relative to the report folder
  std::string png_bytes;  // embedded in the HTML
};

struct PlotFiles;  // report_plots.hpp
// A drawn plot as a figure of a document whose folder holds plots/: the images by their
// paths in plots/, the PNG read to be embedded in the HTML.
ReportFigure figure_of(const PlotFiles& files, const std::string& caption);

struct ReportBlock {
  enum class Kind { heading, paragraph, bullets, table, figure, preformatted } kind = Kind::paragraph;
  int level = 2;                   // heading level
  std::string text;                // heading, paragraph or preformatted text
  std::vector<std::string> items;  // bullets
  ReportTable table;
  ReportFigure figure;
};

// Text is plain: renderers escape it for their format. A paragraph may use **bold** spans,
// the one piece of markup both renderers understand.
class ReportDocument {
 public:
  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text);
  void bullets(const std::vector<std::string>& items);
  void table(const ReportTable& table);
  void figure(const ReportFigure& figure);
  void preformatted(const std::string& text);

  const std::vector<ReportBlock>& blocks() const { return blocks_; }
  std::string title;

 private:
  ReportBlock& add(ReportBlock::Kind kind);
  std::vector<ReportBlock> blocks_;
};

std::string render_markdown(const ReportDocument& document);
std::string render_html(const ReportDocument& document);

// Escapes &, <, >, " and ' (attribute-safe as well as text-safe).
std::string html_escape(const std::string& text);
// Escapes the characters that Markdown tables and inline text would interpret: | \ ` * _ < >
// [ ] and newlines (as spaces), so a model or host name is shown exactly as stored.
std::string markdown_escape(const std::string& text);

}  // namespace ddpscale
