#include "results/report/report_plots.hpp"

#include "results/store/text_io.hpp"

#include <sys/wait.h>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/error.hpp>
#include <boost/process/exception.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>
#include <boost/process/start_dir.hpp>
#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace ddpscale {

namespace fs = std::filesystem;
namespace bp = boost::process;

namespace {

const char kInstallHint[] = "(Debian: apt-get install gnuplot-nox)";

// ---- Running gnuplot ------------------------------------------------------------------------

// A scratch file that takes gnuplot's stdout or stderr: std::tmpfile's file has no name, so
// nothing is left behind even if we are killed. Files rather than pipes: reading two pipes
// needs polling to avoid a deadlock, and gnuplot's output is small.
class CaptureFile {
 public:
  CaptureFile() : file_(std::tmpfile()) {
    if (!file_) throw std::runtime_error(std::string("cannot create a scratch file: ") + std::strerror(errno));
  }
  ~CaptureFile() { std::fclose(file_); }
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;

  std::FILE* file() const { return file_; }

  std::string contents() const {
    std::rewind(file_);
    std::string text;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file_)) > 0;) text.append(buffer, n);
    return text;
  }

 private:
  std::FILE* file_;
};

struct GnuplotRun {
  bool started = false;
  int wait_status = 0;  // as waitpid gives it
  std::string out, err;

  bool succeeded() const { return started && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }
  std::string describe_status() const {  // "exit status 1", "killed by signal 9"
    if (!started) return "not started";
    if (WIFEXITED(wait_status)) return "exit status " + std::to_string(WEXITSTATUS(wait_status));
    if (WIFSIGNALED(wait_status)) return "killed by signal " + std::to_string(WTERMSIG(wait_status));
    return "wait status " + std::to_string(wait_status);
  }
};

// Runs gnuplot (an absolute path) with args in work_dir, stdin from /dev/null, no shell,
// and waits for it. A gnuplot that cannot be started is a run that did not start, with
// Boost.Process's reason as its message.
GnuplotRun run_gnuplot(const std::string& gnuplot, const std::vector<std::string>& args,
                       const std::string& work_dir) {
  CaptureFile out, err;
  GnuplotRun run;
  try {
    bp::child child(bp::exe = gnuplot, bp::args = args, bp::start_dir = work_dir, bp::std_in < bp::null,
                    bp::std_out > out.file(), bp::std_err > err.file());
    child.wait();
    run.started = true;
    run.wait_status = child.native_exit_code();
  } catch (const bp::process_error& error) {
    run.err = error.what();
    return run;
  }
  run.out = out.contents();
  run.err = err.contents();
  return run;
}

// The first few non-blank lines of a program's message: enough for gnuplot's
// "<script>" line N: <what> and the command it quotes, short enough for a report.
std::string first_lines(const std::string& text, size_t max_lines = 6, size_t max_chars = 1200) {
  std::istringstream in(text);
  std::string line, kept;
  size_t lines = 0;
  while (lines < max_lines && std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!kept.empty()) kept += '\n';
    kept += line;
    ++lines;
  }
  if (kept.size() > max_chars) kept = kept.substr(0, max_chars) + "...";
  return kept.empty() ? "(no message)" : kept;
}

// ---- Finding and checking gnuplot -------------------------------------------------------

// gnuplot's absolute path as execvp would find it on PATH ("" when it is not there), so the
// program found is the one we report and run from the plot folder. Empty PATH entries
// (which execvp reads as the current directory) are skipped: running a "gnuplot" that
// happens to sit in the working directory would be a surprise.
std::string find_gnuplot() {
  std::vector<decltype(bp::search_path(""))> folders;
  for (const auto& folder : boost::this_process::path())
    if (!folder.empty()) folders.push_back(folder);
  const std::string found = bp::search_path("gnuplot", folders).string();
  if (found.empty()) return "";
  std::error_code error;
  const fs::path absolute = fs::absolute(found, error);
  return error ? found : absolute.string();
}

bool gnuplot_accepts(const std::string& gnuplot, const std::string& command,
                     const std::string& work_dir) {
  return run_gnuplot(gnuplot, {"-e", command}, work_dir).succeeded();
}

// Empty when `gnuplot --version` runs and says it is gnuplot, else why not.
std::string check_gnuplot_runs(const std::string& gnuplot, const std::string& work_dir) {
  const GnuplotRun version = run_gnuplot(gnuplot, {"--version"}, work_dir);
  if (!version.succeeded()) {
    return "gnuplot at " + gnuplot + " does not run (" + version.describe_status() +
           "): " + first_lines(version.err, 2);
  }
  if (version.out.rfind("gnuplot ", 0) != 0) {
    return "the program at " + gnuplot + " does not say it is gnuplot: " + first_lines(version.out, 1);
  }
  return "";
}

// ---- Writing gnuplot text -----------------------------------------------------------------

bool is_continuation_byte(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence starting at text[i], or 0 if it is not one.
size_t utf8_sequence_length(const std::string& text, size_t i) {
  const unsigned char lead = static_cast<unsigned char>(text[i]);
  size_t length = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) length = 3;
  else if (lead >= 0xF0 && lead <= 0xF4) length = 4;
  else return 0;
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if (!is_continuation_byte(static_cast<unsigned char>(text[i + k]))) return 0;
  }
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
  const unsigned char second = static_cast<unsigned char>(text[i + 1]);
  if (lead == 0xE0 && second < 0xA0) return 0;
  if (lead == 0xED && second > 0x9F) return 0;
  if (lead == 0xF0 && second < 0x90) return 0;
  if (lead == 0xF4 && second > 0x8F) return 0;
  return length;
}

// gnuplot copies label bytes into the SVG as they are; a stray Latin-1 byte from a data
// file would make the whole SVG ill-formed XML, so such bytes become U+FFFD.
std::string valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

// A gnuplot string expression that shows text literally. Plain text goes in single
// quotes, where backslashes stay as they are and neither `command` nor @macro
// substitution happens (checked with gnuplot 5.4). Quotes are not doubled ('') inside
// them: gnuplot 5.4 ends the string early when a doubled quote comes first or right
// after another one ('''' or 'a'''''). So a quote, like a newline (which would end the
// command), is spliced in as a double-quoted "'" or "\n" with gnuplot's string
// concatenation: it's -> 'it'."'".'s'. Other control characters become spaces. Markup
// such as _ ^ { } @ is turned off by the terminals' `noenhanced`.
std::string gnuplot_string(const std::string& text) {
  std::vector<std::string> pieces;
  std::string run;
  auto end_run = [&] {
    if (!run.empty()) pieces.push_back("'" + run + "'");
    run.clear();
  };
  for (char c : valid_utf8(text)) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\n') {
      end_run();
      pieces.push_back(c == '\'' ? "\"'\"" : "\"\\n\"");
    } else {
      run += (byte < 0x20 || byte == 0x7F) ? ' ' : c;
    }
  }
  end_run();
  if (pieces.empty()) return "''";
  std::string expression = pieces[0];
  for (size_t i = 1; i < pieces.size(); ++i) expression += "." + pieces[i];
  return expression;
}

// Text for a '#' comment line in a data file: one line, no control characters.
std::string comment_text(const std::string& text) {
  std::string out = valid_utf8(text);
  for (char& c : out) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) c = ' ';
  }
  return out;
}

void check_name(const std::string& name) {
  const bool allowed = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
  });
  if (!allowed) {
    throw std::invalid_argument("plot name \"" + comment_text(name) +
                                "\" must be non-empty and use only letters, digits, '.', '_', '-'");
  }
}

const char kFont[] = "font 'sans,12' background rgb 'white' noenhanced";

// Both images come from one script: the SVG for the HTML report, then the PNG (for
// viewers without SVG) by replotting the same plot at a larger size.
std::string script_head(const std::string& name) {
  return "# Drawn by ddpscale. To restyle, edit this file and run `gnuplot " + name +
         ".gp` in its directory.\n"
         "set encoding utf8\n"
         "set terminal svg size 800,500 fixed " + std::string(kFont) + "\n"
         "set output '" + name + ".svg'\n";
}

std::string script_tail(const std::string& name, const std::string& png_terminal) {
  return "set terminal " + png_terminal + " size 1000,625 " + std::string(kFont) + "\n"
         "set output '" + name + ".png'\n"
         "replot\n"
         "unset output\n";
}

// Joins plot elements into one `plot` command, one element per line.
std::string plot_command(const std::vector<std::string>& elements) {
  std::string command = "plot ";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) command += ", \\\n     ";
    command += elements[i];
  }
  return command + "\n";
}

// ---- Line plots ---------------------------------------------------------------------------

struct Point {
  double x, y, low, high;
};

void check_series_sizes(const LinePlot& plot, const PlotSeries& series) {
  const bool sizes_match = series.x.size() == series.y.size();
  const bool bars_match = (series.y_low.empty() && series.y_high.empty()) ||
                          (series.y_low.size() == series.y.size() && series.y_high.size() == series.y.size());
  if (!sizes_match || !bars_match) {
    throw std::invalid_argument("plot " + plot.name + ", series \"" + comment_text(series.label) +
                                "\": x, y, y_low, y_high must have the same length (or no y_low/y_high)");
  }
}

// The points gnuplot can place: non-finite x or y are left out, and so is x <= 0 on a log
// axis. A missing bound keeps the point and draws no bar (a single run has a value but no
// interval), rather than dropping a measured point.
std::vector<Point> plottable_points(const PlotSeries& series, bool log_x) {
  const bool has_bars = !series.y_low.empty();
  std::vector<Point> points;
  for (size_t i = 0; i < series.x.size(); ++i) {
    const double x = series.x[i], y = series.y[i];
    if (!std::isfinite(x) || !std::isfinite(y) || (log_x && x <= 0)) continue;
    Point point{x, y, y, y};
    if (has_bars && std::isfinite(series.y_low[i])) point.low = series.y_low[i];
    if (has_bars && std::isfinite(series.y_high[i])) point.high = series.y_high[i];
    points.push_back(point);
  }
  return points;
}

// One series as drawn: its data block's `index` in the .dat file.
struct SeriesBlock {
  const PlotSeries* series;
  size_t index;
  std::vector<Point> points;
};

std::vector<SeriesBlock> line_plot_blocks(const LinePlot& plot) {
  std::vector<SeriesBlock> blocks;
  for (const PlotSeries& series : plot.series) {
    check_series_sizes(plot, series);
    std::vector<Point> points = plottable_points(series, plot.log_x);
    if (!points.empty()) blocks.push_back({&series, blocks.size(), std::move(points)});
  }
  return blocks;
}

bool has_error_bars(const PlotSeries& series) { return !series.y_low.empty(); }

std::string line_plot_data(const std::vector<SeriesBlock>& blocks) {
  std::string data = "# ddpscale plot data: one block per series (gnuplot index 0, 1, ...);"
                     " columns x y [y_low y_high]\n";
  for (const SeriesBlock& block : blocks) {
    if (block.index > 0) data += "\n\n";  // two blank lines end a gnuplot data block
    data += "# series " + std::to_string(block.index) + ": " + comment_text(block.series->label) + "\n";
    for (const Point& p : block.points) {
      data += round_trip_text(p.x) + " " + round_trip_text(p.y);
      if (has_error_bars(*block.series)) data += " " + round_trip_text(p.low) + " " + round_trip_text(p.high);
      data += "\n";
    }
  }
  return data;
}

// A tic label a reader takes in at a glance: 8, 250K, 6.9M, 1.2B (two digits where the
// number is below 10 in its unit, whole numbers above), never 6.88538e+06.
std::string tic_label(double x) {
  static const char* const kUnits[] = {"", "K", "M", "B", "T"};
  size_t unit = 0;
  double scaled = x;
  while (std::fabs(scaled) >= 1000 && unit + 1 < std::size(kUnits)) scaled /= 1000, ++unit;
  char text[32];
  if (unit == 0) std::snprintf(text, sizeof(text), "%g", scaled);
  else if (std::fabs(scaled) >= 10) std::snprintf(text, sizeof(text), "%.0f", scaled);
  else std::snprintf(text, sizeof(text), "%.1f", scaled);
  std::string label = text;
  if (label.size() > 2 && label.compare(label.size() - 2, 2, ".0") == 0) label.resize(label.size() - 2);
  return label + kUnits[unit];
}

// Scaling studies put few x values on a log axis (1, 2, 4, 8 GPUs): tics exactly at them,
// labelled by tic_label, read best. Many values (message sizes) get decade tics with SI
// prefixes (1k, 1M).
std::string log_x_settings(const std::vector<SeriesBlock>& blocks) {
  std::set<double> xs;
  for (const SeriesBlock& block : blocks) {
    for (const Point& p : block.points) xs.insert(p.x);
  }
  std::string settings = "set logscale x\n";
  if (xs.size() > 10) return settings + "set format x '%.0s%c'\n";
  std::string tics;
  for (double x : xs) tics += (tics.empty() ? "" : ", ") + std::string("'") + tic_label(x) + "' " + round_trip_text(x);
  return settings + "set xtics (" + tics + ")\n";
}

std::string series_element(const std::string& name, const SeriesBlock& block) {
  const std::string style = has_error_bars(*block.series) ? "using 1:2:3:4 with yerrorlines"
                                                          : "using 1:2 with linespoints";
  return "'" + name + ".dat' index " + std::to_string(block.index) + " " + style +
         " linewidth 1.5 title " + gnuplot_string(block.series->label);
}

// A constant function rather than an arrow, so autoscaling keeps the line in view and
// the key names it.
std::string reference_element(double y) {
  return round_trip_text(y) + " with lines dashtype 2 linewidth 1.5 linecolor rgb 'gray40' title " +
         gnuplot_string("reference: y = " + round_trip_text(y));
}

std::string line_plot_script(const LinePlot& plot, const std::vector<SeriesBlock>& blocks,
                             const std::string& png_terminal) {
  std::string script = script_head(plot.name);
  script += "set title " + gnuplot_string(plot.title) + "\n";
  script += "set xlabel " + gnuplot_string(plot.x_label) + "\n";
  script += "set ylabel " + gnuplot_string(plot.y_label) + "\n";
  script += "set key top left\nset grid\n";
  // x spans exactly the data plus a small margin: gnuplot would otherwise stretch it to
  // the next tic (1..8 GPUs drawn up to 10) or put the end points' error bars on the frame.
  script += "set autoscale xfix\nset offsets graph 0.04, graph 0.04, 0, 0\n";
  if (plot.log_x) script += log_x_settings(blocks);

  std::vector<std::string> elements;
  for (const SeriesBlock& block : blocks) elements.push_back(series_element(plot.name, block));
  if (plot.draw_reference_line && std::isfinite(plot.reference_y)) {
    elements.push_back(reference_element(plot.reference_y));
  }
  return script + plot_command(elements) + script_tail(plot.name, png_terminal);
}

// ---- Stacked bar plots --------------------------------------------------------------------

void check_bar_sizes(const StackedBarPlot& plot) {
  bool sizes_match = plot.values.size() == plot.segments.size();
  for (const std::vector<double>& row : plot.values) sizes_match = sizes_match && row.size() == plot.bars.size();
  if (!sizes_match) {
    throw std::invalid_argument("plot " + plot.name +
                                ": values must be [segment][bar], one row per segment, one value per bar");
  }
}

// One row per bar, one column per segment: the layout of gnuplot's rowstacked histogram.
// A missing (non-finite) segment is written as 0, so it adds nothing to its stack.
std::string bar_plot_data(const StackedBarPlot& plot) {
  std::string data = "# ddpscale plot data: one row per bar; columns:";
  for (const std::string& segment : plot.segments) data += " [" + comment_text(segment) + "]";
  data += "\n";
  for (size_t bar = 0; bar < plot.bars.size(); ++bar) {
    data += "# " + comment_text(plot.bars[bar]) + "\n";
    for (size_t segment = 0; segment < plot.segments.size(); ++segment) {
      const double value = plot.values[segment][bar];
      data += (segment > 0 ? " " : "") + round_trip_text(std::isfinite(value) ? value : 0.0);
    }
    data += "\n";
  }
  return data;
}

// Bar names go in as explicit tics (histogram bars sit at x = 0, 1, ...) rather than as
// xtic() strings in the data file, so every user string passes through gnuplot_string.
std::string bar_tics(const StackedBarPlot& plot) {
  std::string tics;
  for (size_t bar = 0; bar < plot.bars.size(); ++bar) {
    tics += (bar > 0 ? ", " : "") + gnuplot_string(plot.bars[bar]) + " " + std::to_string(bar);
  }
  const bool crowded = plot.bars.size() > 6;
  return "set xtics (" + tics + ") nomirror" + (crowded ? " rotate by 45 right" : "") + "\n";
}

bool all_non_negative(const StackedBarPlot& plot) {
  for (const std::vector<double>& row : plot.values) {
    for (double value : row) {
      if (value < 0) return false;
    }
  }
  return true;
}

std::string bar_plot_script(const StackedBarPlot& plot, const std::string& png_terminal) {
  std::string script = script_head(plot.name);
  script += "set title " + gnuplot_string(plot.title) + "\n";
  script += "set ylabel " + gnuplot_string(plot.y_label) + "\n";
  script += "set style data histograms\nset style histogram rowstacked\n"
            "set style fill solid 0.85 border -1\nset boxwidth 0.7 relative\n";
  script += "set key outside right top\nset grid ytics\n";
  script += bar_tics(plot);
  script += "set xrange [-0.6:" + round_trip_text(static_cast<double>(plot.bars.size()) - 0.4) + "]\n";
  if (all_non_negative(plot)) script += "set yrange [0:*]\n";

  std::vector<std::string> elements;
  for (size_t segment = 0; segment < plot.segments.size(); ++segment) {
    elements.push_back("'" + plot.name + ".dat' using " + std::to_string(segment + 1) + " title " +
                       gnuplot_string(plot.segments[segment]));
  }
  return script + plot_command(elements) + script_tail(plot.name, png_terminal);
}

// ---- Drawing ------------------------------------------------------------------------------

void check_image(const fs::path& image, const std::string& name) {
  std::error_code error;
  const auto size = fs::file_size(image, error);
  if (error || size == 0) {
    throw std::runtime_error("gnuplot ran " + name + ".gp but wrote no " + image.filename().string());
  }
}

// Writes <name>.dat and <name>.gp, then (when gnuplot is there) runs the script. The
// files are written even without gnuplot so a user can install it and draw them later.
PlotFiles render(const std::string& out_dir, const std::string& gnuplot, const std::string& name,
                 const std::string& data, const std::string& script) {
  const fs::path dir(out_dir);
  write_whole_file((dir / (name + ".dat")).string(), data);
  write_whole_file((dir / (name + ".gp")).string(), script);
  if (gnuplot.empty()) return {};

  const fs::path svg = dir / (name + ".svg"), png = dir / (name + ".png");
  std::error_code ignored;
  fs::remove(svg, ignored);  // so a stale image from an earlier run never passes for new
  fs::remove(png, ignored);
  // "./" so a name starting with '-' is never read as an option.
  const GnuplotRun result = run_gnuplot(gnuplot, {"./" + name + ".gp"}, out_dir);
  if (!result.succeeded()) {
    throw std::runtime_error("gnuplot failed on " + name + ".gp: " + first_lines(result.err) + " (" +
                             result.describe_status() + ")");
  }
  check_image(svg, name);
  check_image(png, name);
  return {svg.string(), png.string()};
}

}  // namespace

Plotter::Plotter(std::string out_dir) : out_dir_(std::move(out_dir)) {
  fs::create_directories(out_dir_);
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) {
    unavailable_reason_ = std::string("gnuplot not found on PATH ") + kInstallHint;
    return;
  }
  unavailable_reason_ = check_gnuplot_runs(gnuplot, out_dir_);
  if (!available()) return;
  if (!gnuplot_accepts(gnuplot, "set terminal svg", out_dir_)) {
    unavailable_reason_ = "gnuplot at " + gnuplot + " has no svg terminal " + kInstallHint;
    return;
  }
  if (!gnuplot_accepts(gnuplot, "set terminal pngcairo", out_dir_)) {
    if (!gnuplot_accepts(gnuplot, "set terminal png", out_dir_)) {
      unavailable_reason_ = "gnuplot at " + gnuplot + " has neither the pngcairo nor the png terminal " +
                            kInstallHint;
      return;
    }
    png_terminal_ = "png";
  }
  gnuplot_ = gnuplot;  // only a usable gnuplot is kept: draw() runs whatever is here
}

PlotFiles Plotter::draw(const LinePlot& plot) {
  check_name(plot.name);
  const std::vector<SeriesBlock> blocks = line_plot_blocks(plot);
  if (blocks.empty()) return {};  // gnuplot cannot autoscale an empty plot; nothing to show
  return render(out_dir_, gnuplot_, plot.name, line_plot_data(blocks),
                line_plot_script(plot, blocks, png_terminal_));
}

PlotFiles Plotter::draw(const StackedBarPlot& plot) {
  check_name(plot.name);
  check_bar_sizes(plot);
  if (plot.bars.empty() || plot.segments.empty()) return {};
  return render(out_dir_, gnuplot_, plot.name, bar_plot_data(plot), bar_plot_script(plot, png_terminal_));
}

std::string base64_encode(const std::string& bytes) {
  // EVP_EncodeBlock writes 4 characters for every 3 bytes begun, '='-padded, no line breaks,
  // and a terminating NUL; it takes an int length, which a PNG is far from reaching.
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) / 4 * 3)
    throw std::length_error("base64_encode: " + std::to_string(bytes.size()) +
                            " bytes are more than OpenSSL encodes at once");
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(&out[0]),
                                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(written));
  return out;
}

}  // namespace ddpscale
