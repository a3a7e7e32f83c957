// The report's plots: base64 against the RFC's vectors, real gnuplot runs (skipped where
// gnuplot is not installed), and stand-in "gnuplot" scripts for the failure paths.
#include "results/report/report_plots.hpp"
#include "tests/temp_dir.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpscale {
namespace {

namespace fs = std::filesystem;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const char kTrickyTitle[] = "it's \"quoted\" \\ a_b^c";

// Sets PATH for one scope and puts the old value back, even when an ASSERT returns early.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    const char* old = std::getenv("PATH");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (had_old_) setenv("PATH", old_.c_str(), 1);
    else unsetenv("PATH");
  }

 private:
  bool had_old_ = false;
  std::string old_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A stand-in "gnuplot": a /bin/sh script in dir, to reach paths a real gnuplot never takes.
void write_fake_gnuplot(const fs::path& dir, const std::string& body) {
  const fs::path path = dir / "gnuplot";
  std::ofstream(path) << "#!/bin/sh\n" << body;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
}

// Answers the constructor's checks like gnuplot 5.4 with svg and pngcairo; `draw_body`
// runs for the plot script.
std::string fake_gnuplot_script(const std::string& draw_body) {
  return "case \"$1\" in\n"
         "  --version) echo 'gnuplot 5.4 patchlevel 4'; exit 0;;\n"
         "  -e) exit 0;;\n"
         "esac\n" +
         draw_body;
}

// Whether the SVG holds text, with its single quotes as they are or XML-escaped (gnuplot
// 5.4 leaves them; an escaping version would still be right).
bool svg_has_text(const std::string& svg, const std::string& text) {
  for (const std::string quote : {"'", "&apos;", "&#39;"}) {
    std::string expected;
    for (char c : text) expected += c == '\'' ? quote : std::string(1, c);
    if (svg.find(expected) != std::string::npos) return true;
  }
  return false;
}

bool is_svg(const std::string& text) { return text.rfind("<?xml", 0) == 0 || text.find("<svg") != std::string::npos; }

const std::string kPngSignature("\x89PNG\r\n\x1a\n", 8);

// Width and height from the PNG's IHDR chunk (big-endian, at bytes 16 and 20).
std::pair<unsigned, unsigned> png_size(const std::string& png) {
  auto be32 = [&](size_t at) {
    unsigned value = 0;
    for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(png.at(at + i));
    return value;
  };
  return {be32(16), be32(20)};
}

LinePlot speedup_plot(const std::string& title) {
  LinePlot plot;
  plot.name = "speedup";
  plot.title = title;
  plot.x_label = "GPUs";
  plot.y_label = "speedup over 1 GPU";
  plot.log_x = true;
  plot.draw_reference_line = true;
  plot.reference_y = 1.0;
  PlotSeries measured;
  measured.label = "measured (95% CI)";
  measured.x = {1, 2, 4, 8};
  measured.y = {1, 1.9, kNaN, 7.2};
  measured.y_low = {0.9, 1.8, 3.5, 6.9};
  measured.y_high = {1.1, 2, 3.9, 7.5};
  PlotSeries other;
  other.label = "fp16 all-reduce";
  other.x = {1, 2, 4, 8};
  other.y = {1, 1.5, 2.2, 3};
  plot.series = {measured, other};
  return plot;
}

StackedBarPlot breakdown_plot(size_t bars) {
  StackedBarPlot plot;
  plot.name = "breakdown";
  plot.title = "time per step: a_b^c {x} @home";
  plot.y_label = "ms";
  plot.segments = {"compute", "all-reduce", "idle"};
  plot.values.assign(3, {});
  for (size_t bar = 0; bar < bars; ++bar) {
    plot.bars.push_back("np=" + std::to_string(1u << bar) + "_x");
    plot.values[0].push_back(10.0 + static_cast<double>(bar));
    plot.values[1].push_back(2.0 * static_cast<double>(bar));
    plot.values[2].push_back(bar == 1 ? kNaN : 1.5);
  }
  return plot;
}

// ---- base64 --------------------------------------------------------------------------------

TEST(Base64, Rfc4648Section10TestVectors) {
  // RFC 4648, "The Base16, Base32, and Base64 Data Encodings", section 10 "Test Vectors".
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, BinaryBytesIncludingZeroAnd0xFF) {
  // Expected values from python3: base64.b64encode(b'\x00\xff\x00\x10\x80\xfe\xff') etc.
  EXPECT_EQ(base64_encode(std::string("\x00\xff\x00\x10\x80\xfe\xff", 7)), "AP8AEID+/w==");
  EXPECT_EQ(base64_encode(std::string(1, '\0')), "AA==");
  EXPECT_EQ(base64_encode("\xff\xff"), "//8=");
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += static_cast<char>(b);
  const std::string encoded = base64_encode(all_bytes);
  EXPECT_EQ(encoded.size(), 344u);
  EXPECT_EQ(encoded.substr(0, 40), "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd");
  EXPECT_EQ(encoded.substr(344 - 12), "+fr7/P3+/w==");
}

// ---- Drawing with the real gnuplot ----------------------------------------------------------

#define SKIP_WITHOUT_GNUPLOT(plotter) \
  if (!(plotter).available()) GTEST_SKIP() << "no usable gnuplot: " << (plotter).unavailable_reason()

TEST(LinePlotDraw, WritesSvgAndPngWithTheTitleLiterally) {
  TempDir dir;
  Plotter plotter(dir.str());
  SKIP_WITHOUT_GNUPLOT(plotter);

  const PlotFiles files = plotter.draw(speedup_plot(kTrickyTitle));
  ASSERT_TRUE(files.drawn());
  EXPECT_EQ(fs::path(files.svg), dir.path() / "speedup.svg");
  EXPECT_EQ(fs::path(files.png), dir.path() / "speedup.png");

  const std::string svg = read_file(files.svg);
  EXPECT_TRUE(is_svg(svg)) << svg.substr(0, 200);
  EXPECT_NE(svg.find("width=\"800\" height=\"500\""), std::string::npos);
  // Noenhanced: with markup on, _ and ^ would turn into sub/superscript pieces.
  EXPECT_NE(svg.find("\\ a_b^c"), std::string::npos);
  EXPECT_TRUE(svg_has_text(svg, "it's")) << svg.substr(0, 200);
  EXPECT_NE(svg.find("measured (95% CI)"), std::string::npos);
  EXPECT_NE(svg.find("fp16 all-reduce"), std::string::npos);
  EXPECT_NE(svg.find("reference: y = 1"), std::string::npos);
  EXPECT_NE(svg.find("speedup over 1 GPU"), std::string::npos);

  const std::string png = read_file(files.png);
  ASSERT_GE(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), kPngSignature);
  EXPECT_EQ(png_size(png), std::make_pair(1000u, 625u));
}

TEST(LinePlotDraw, KeepsDataAndScriptWithNaNLeftOut) {
  TempDir dir;
  Plotter plotter(dir.str());
  SKIP_WITHOUT_GNUPLOT(plotter);
  plotter.draw(speedup_plot(kTrickyTitle));

  const std::string data = read_file(dir.path() / "speedup.dat");
  // Series 0: the NaN at x = 4 is gone; two blank lines end the block.
  EXPECT_NE(data.find("# series 0: measured (95% CI)\n1 1 0.9 1.1\n2 1.9 1.8 2\n8 7.2 6.9 7.5\n\n\n"
                      "# series 1: fp16 all-reduce\n1 1\n2 1.5\n4 2.2\n8 3\n"),
            std::string::npos)
      << data;

  const std::string script = read_file(dir.path() / "speedup.gp");
  // The quote is spliced in as "'": gnuplot 5.4 misreads some doubled quotes ('').
  EXPECT_NE(script.find("set title 'it'.\"'\".'s \"quoted\" \\ a_b^c'\n"), std::string::npos) << script;
  EXPECT_NE(script.find("set terminal svg size 800,500 fixed font 'sans,12' background rgb 'white' noenhanced"),
            std::string::npos);
  EXPECT_NE(script.find("set terminal pngcairo size 1000,625"), std::string::npos);
  EXPECT_NE(script.find("set logscale x\n"), std::string::npos);
  EXPECT_NE(script.find("set xtics ('1' 1, '2' 2, '4' 4, '8' 8)"), std::string::npos) << script;
  EXPECT_NE(script.find("index 0 using 1:2:3:4 with yerrorlines"), std::string::npos);
  EXPECT_NE(script.find("index 1 using 1:2 with linespoints"), std::string::npos);
  EXPECT_NE(script.find("1 with lines dashtype 2"), std::string::npos);
  EXPECT_NE(script.find("set key top left\nset grid\n"), std::string::npos);
}

TEST(LinePlotDraw, LabelsNeverRunCommandsOrMacros) {
  TempDir dir;
  Plotter plotter(dir.str());
  SKIP_WITHOUT_GNUPLOT(plotter);
  const fs::path marker = dir.path() / "marker";
  LinePlot plot = speedup_plot("run `touch " + marker.string() + "` @GPVAL_TERM\nsecond line");
  plot.series[0].label = "'";
  plot.series[1].label = "''it's {x}_1 ''";

  ASSERT_TRUE(plotter.draw(plot).drawn());
  EXPECT_FALSE(fs::exists(marker));
  const std::string svg = read_file(dir.path() / "speedup.svg");
  EXPECT_NE(svg.find("run `touch " + marker.string() + "` @GPVAL_TERM"), std::string::npos);
  EXPECT_NE(svg.find(">second line<"), std::string::npos);  // the newline made a second line
  EXPECT_TRUE(svg_has_text(svg, ">'<")) << svg;
  EXPECT_TRUE(svg_has_text(svg, ">''it's {x}_1 ''<")) << svg;
}

// Parameter counts on the answer chart's axis: labels a reader takes in, not 6.88538e+06.
TEST(LinePlotDraw, LargeTicValuesReadAsThousandsAndMillions) {
  TempDir dir;
  Plotter plotter(dir.str());
  SKIP_WITHOUT_GNUPLOT(plotter);
  LinePlot plot;
  plot.name = "sizes";
  plot.log_x = true;
  plot.series.push_back({"mlp", {249'000, 6'885'376, 25'000'000, 1'200'000'000}, {1, 1.1, 1.5, 1.9}, {}, {}});
  ASSERT_TRUE(plotter.draw(plot).drawn());
  const std::string script = read_file(dir.path() / "sizes.gp");
  // Positions stay exact (round-trip text, which gnuplot reads in any notation); labels are short.
  EXPECT_NE(script.find("set xtics ('249K' 249000, '6.9M' 6885376, '25M' 2.5e+07, '1.2B' 1.2e+09)\n"),
            std::string::npos)
      << script;
  EXPECT_EQ(read_file(dir.path() / "sizes.svg").find("e+0"), std::string::npos);
}

TEST(LinePlotDraw, NothingToPlotIsNotDrawn) {
  TempDir dir;
  Plotter plotter(dir.str());
  LinePlot plot;
  plot.name = "empty";
  plot.series.push_back({"all NaN", {1, 2}, {kNaN, kNaN}, {}, {}});
  EXPECT_FALSE(plotter.draw(plot).drawn());
}

TEST(StackedBarDraw, WritesSvgAndPngWithBarAndSegmentNames) {
  TempDir dir;
  Plotter plotter(dir.str());
  SKIP_WITHOUT_GNUPLOT(plotter);

  const PlotFiles files = plotter.draw(breakdown_plot(7));
  ASSERT_TRUE(files.drawn());
  const std::string svg = read_file(files.svg);
  EXPECT_TRUE(is_svg(svg));
  EXPECT_NE(svg.find("a_b^c {x} @home"), std::string::npos);
  EXPECT_NE(svg.find("np=64_x"), std::string::npos);
  EXPECT_NE(svg.find("all-reduce"), std::string::npos);
  const std::string png = read_file(files.png);
  ASSERT_GE(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), kPngSignature);
  EXPECT_EQ(png_size(png), std::make_pair(1000u, 625u));

  // One row per bar, a column per segment; the NaN segment of bar 1 counts as 0.
  const std::string data = read_file(dir.path() / "breakdown.dat");
  EXPECT_NE(data.find("# np=1_x\n10 0 1.5\n# np=2_x\n11 2 0\n"), std::string::npos) << data;
  const std::string script = read_file(dir.path() / "breakdown.gp");
  EXPECT_NE(script.find("set style histogram rowstacked"), std::string::npos);
  EXPECT_NE(script.find("rotate by 45"), std::string::npos);  // 7 bars: labels slanted
  EXPECT_NE(script.find("using 2 title 'all-reduce'"), std::string::npos);
}

TEST(StackedBarDraw, FewBarsKeepLabelsUpright) {
  TempDir dir;
  Plotter plotter(dir.str());
  SKIP_WITHOUT_GNUPLOT(plotter);
  ASSERT_TRUE(plotter.draw(breakdown_plot(3)).drawn());
  const std::string script = read_file(dir.path() / "breakdown.gp");
  EXPECT_NE(script.find("set xtics ('np=1_x' 0, 'np=2_x' 1, 'np=4_x' 2) nomirror\n"), std::string::npos) << script;
}

// ---- Arguments ------------------------------------------------------------------------------

TEST(PlotArguments, NamesOutsideTheSafeSetAreRejected) {
  TempDir dir;
  Plotter plotter(dir.str());
  for (const std::string name : {"", "../up", "a b", "sub/dir", "x;rm", "quo'te", "caf\xc3\xa9"}) {
    LinePlot line = speedup_plot("t");
    line.name = name;
    EXPECT_THROW(plotter.draw(line), std::invalid_argument) << name;
    StackedBarPlot bars = breakdown_plot(2);
    bars.name = name;
    EXPECT_THROW(plotter.draw(bars), std::invalid_argument) << name;
  }
  EXPECT_FALSE(fs::exists(dir.path().parent_path() / "up.gp"));
}

TEST(PlotArguments, MismatchedLengthsAreRejected) {
  TempDir dir;
  Plotter plotter(dir.str());
  LinePlot line = speedup_plot("t");
  line.series[0].y_high.pop_back();
  EXPECT_THROW(plotter.draw(line), std::invalid_argument);
  StackedBarPlot bars = breakdown_plot(3);
  bars.values[2].pop_back();
  EXPECT_THROW(plotter.draw(bars), std::invalid_argument);
}

// ---- Without a working gnuplot --------------------------------------------------------------

TEST(PlotterAvailability, NoGnuplotOnPathIsReportedAndNothingIsDrawn) {
  TempDir dir, empty_bin;
  ScopedPath path(empty_bin.str());
  Plotter plotter(dir.str());
  EXPECT_FALSE(plotter.available());
  EXPECT_NE(plotter.unavailable_reason().find("gnuplot"), std::string::npos) << plotter.unavailable_reason();
  const PlotFiles files = plotter.draw(speedup_plot("t"));
  EXPECT_FALSE(files.drawn());
  // The script is still there for a user who installs gnuplot later.
  EXPECT_TRUE(fs::exists(dir.path() / "speedup.gp"));
  EXPECT_FALSE(fs::exists(dir.path() / "speedup.svg"));
}

TEST(PlotterAvailability, CreatesTheOutputDirectory) {
  TempDir dir;
  const fs::path nested = dir.path() / "a" / "b";
  Plotter plotter(nested.string());
  EXPECT_TRUE(fs::is_directory(nested));
}

TEST(PlotterAvailability, GnuplotWithoutSvgIsUnavailable) {
  TempDir dir, bin;
  write_fake_gnuplot(bin.path(), "case \"$1\" in --version) echo 'gnuplot 5.4'; exit 0;; esac\nexit 1\n");
  ScopedPath path(bin.str());
  Plotter plotter(dir.str());
  EXPECT_FALSE(plotter.available());
  EXPECT_NE(plotter.unavailable_reason().find("svg"), std::string::npos) << plotter.unavailable_reason();
}

TEST(PlotterAvailability, ProgramThatIsNotGnuplotIsUnavailable) {
  TempDir dir, bin;
  write_fake_gnuplot(bin.path(), "echo 'something else'\n");
  ScopedPath path(bin.str());
  Plotter plotter(dir.str());
  EXPECT_FALSE(plotter.available());
  EXPECT_NE(plotter.unavailable_reason().find("not say it is gnuplot"), std::string::npos)
      << plotter.unavailable_reason();
}

TEST(PlotterAvailability, FallsBackToPngTerminalWithoutCairo) {
  TempDir dir, bin;
  write_fake_gnuplot(bin.path(),
                     "case \"$1 $2\" in\n"
                     "  --version*) echo 'gnuplot 5.4 patchlevel 4'; exit 0;;\n"
                     "  *pngcairo*) exit 1;;\n"
                     "  -e*) exit 0;;\n"
                     "esac\nexit 1\n");
  ScopedPath path(bin.str());
  Plotter plotter(dir.str());
  ASSERT_TRUE(plotter.available()) << plotter.unavailable_reason();
  EXPECT_THROW(plotter.draw(speedup_plot("t")), std::runtime_error);  // the fake draws nothing
  const std::string script = read_file(dir.path() / "speedup.gp");
  EXPECT_NE(script.find("set terminal png size 1000,625"), std::string::npos) << script;
}

TEST(PlotterAvailability, GnuplotThatCannotStartIsUnavailable) {
  TempDir dir, bin;
  const fs::path path = bin.path() / "gnuplot";
  std::ofstream(path) << "#!/nonexistent/interpreter\n";  // execve fails: no such interpreter
  fs::permissions(path, fs::perms::owner_all);
  ScopedPath scoped(bin.str());
  Plotter plotter(dir.str());
  EXPECT_FALSE(plotter.available());
  EXPECT_EQ(plotter.unavailable_reason().rfind("gnuplot at " + path.string() + " does not run (not started): ", 0), 0u)
      << plotter.unavailable_reason();
}

// An empty PATH entry means the current directory to execvp; a "gnuplot" lying there is not run.
TEST(PlotterAvailability, EmptyPathEntriesAreNotTheCurrentDirectory) {
  TempDir dir, here, empty_bin;
  write_fake_gnuplot(here.path(), fake_gnuplot_script("exit 0\n"));
  const fs::path old_cwd = fs::current_path();
  fs::current_path(here.path());
  ScopedPath path(":" + empty_bin.str() + ":");
  Plotter plotter(dir.str());
  fs::current_path(old_cwd);
  EXPECT_FALSE(plotter.available());
  EXPECT_NE(plotter.unavailable_reason().find("gnuplot not found on PATH"), std::string::npos)
      << plotter.unavailable_reason();
}

// The message of the error draw() throws; a test failure when it throws none.
std::string draw_error(Plotter& plotter) {
  try {
    plotter.draw(speedup_plot("t"));
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no exception";
  return "";
}

TEST(PlotterFailures, GnuplotErrorIsThrownWithItsMessage) {
  TempDir dir, bin;
  write_fake_gnuplot(bin.path(), fake_gnuplot_script("echo \"\\\"$1\\\" line 3: fake says no\" >&2\nexit 1\n"));
  ScopedPath path(bin.str());
  Plotter plotter(dir.str());
  ASSERT_TRUE(plotter.available()) << plotter.unavailable_reason();
  const std::string message = draw_error(plotter);
  EXPECT_EQ(message.rfind("gnuplot failed on speedup.gp: ", 0), 0u) << message;
  EXPECT_NE(message.find("\"./speedup.gp\" line 3: fake says no"), std::string::npos) << message;
  EXPECT_NE(message.find("exit status 1"), std::string::npos) << message;
}

TEST(PlotterFailures, GnuplotKilledBySignalIsSaid) {
  TempDir dir, bin;
  write_fake_gnuplot(bin.path(), fake_gnuplot_script("kill -KILL $$\n"));
  ScopedPath path(bin.str());
  Plotter plotter(dir.str());
  ASSERT_TRUE(plotter.available()) << plotter.unavailable_reason();
  const std::string message = draw_error(plotter);
  EXPECT_NE(message.find("(killed by signal 9)"), std::string::npos) << message;
}

TEST(PlotterFailures, MissingImagesAreAnError) {
  TempDir dir, bin;
  write_fake_gnuplot(bin.path(), fake_gnuplot_script("exit 0\n"));
  ScopedPath path(bin.str());
  Plotter plotter(dir.str());
  ASSERT_TRUE(plotter.available()) << plotter.unavailable_reason();
  std::ofstream(dir.path() / "speedup.svg") << "<svg>stale</svg>";  // from an earlier run
  std::ofstream(dir.path() / "speedup.png") << "stale";
  const std::string message = draw_error(plotter);
  EXPECT_NE(message.find("wrote no speedup.svg"), std::string::npos) << message;
}

}  // namespace
}  // namespace ddpscale
