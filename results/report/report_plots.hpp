// The report's plots, drawn by gnuplot (Debian's gnuplot-nox) as SVG and PNG. gnuplot is
// a separate program: when it is missing or fails, the report still writes its tables and
// says why the plots were skipped (Plotter::unavailable_reason).
#pragma once
#include <string>
#include <vector>

namespace ddpscale {

// One line of a line plot; y_low / y_high (same length as y, or both empty) draw error bars.
// NaN values are left out of the plot.
struct PlotSeries {
  std::string label;
  std::vector<double> x, y, y_low, y_high;
};

struct LinePlot {
  std::string name;  // file stem: <out>/<name>.svg and .png; letters, digits, '-', '_', '.' only
  std::string title, x_label, y_label;
  bool log_x = false;
  bool draw_reference_line = false;  // a dashed horizontal line at reference_y (e.g. speedup 1.0)
  double reference_y = 1.0;
  std::vector<PlotSeries> series;
};

// Bars side by side, each a stack of segments: values[segment][bar].
struct StackedBarPlot {
  std::string name, title, y_label;
  std::vector<std::string> bars;
  std::vector<std::string> segments;
  std::vector<std::vector<double>> values;
};

struct PlotFiles {
  std::string svg, png;  // paths written; both empty when the plot was not drawn
  bool drawn() const { return !svg.empty() && !png.empty(); }
};

class Plotter {
 public:
  // Plots go to out_dir (created if missing). Looks for gnuplot once, on PATH.
  explicit Plotter(std::string out_dir);
  bool available() const { return unavailable_reason_.empty(); }
  const std::string& unavailable_reason() const { return unavailable_reason_; }

  // Write the data and the gnuplot script next to the images (<name>.dat, <name>.gp, kept
  // so a user can restyle a plot), run gnuplot, and return the images. A failing gnuplot
  // throws std::runtime_error naming the plot and gnuplot's message.
  PlotFiles draw(const LinePlot& plot);
  PlotFiles draw(const StackedBarPlot& plot);

 private:
  std::string out_dir_;
  std::string gnuplot_;
  std::string unavailable_reason_;
  std::string png_terminal_ = "pngcairo";  // "png" (libgd) where gnuplot was built without cairo
};

// RFC 4648 base64, for embedding PNGs in the self-contained HTML report.
std::string base64_encode(const std::string& bytes);

}  // namespace ddpscale
