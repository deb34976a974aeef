// rlscope-gui [TRACE]: the timeline viewer. With --screenshot it renders the main window off
// screen to a PNG and exits, for scripts and CI (docs/gui.md).
#include <QApplication>
#include <QEventLoop>
#include <QSaveFile>
#include <QTimer>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rlscope/gui_widgets/analysis_panel.h"
#include "rlscope/gui_widgets/main_window.h"
#include "rlscope/gui_widgets/trace_file.h"

namespace {

constexpr int kAnalysisWaitMs = 120'000;

constexpr std::string_view kUsage =
    "usage: rlscope-gui [TRACE]\n"
    "       rlscope-gui --screenshot OUT.png [--size WxH] [--window T0:T1] [--search TEXT] TRACE\n"
    "\n"
    "Shows a trace (rlscope, Kineto JSON or Nsight Systems SQLite) on a timeline, with the\n"
    "selected event's details and the analysis of the run, a range or an operation beside it.\n"
    "  --screenshot OUT.png  render the window off screen and exit: the whole trace fitted, the\n"
    "                        analysis panel filled in (waits for it, at most 2 minutes)\n"
    "  --size WxH            the window's size for --screenshot (default 1600x900)\n"
    "  --window T0:T1        with --screenshot: show this window, times from the trace's start\n"
    "                        with a unit (ns, us, ms, s): 30s:43s, 120ms:125.5ms\n"
    "  --search TEXT         with --screenshot: search event names for TEXT (substring) and\n"
    "                        select the first match: its details, its links, and for an\n"
    "                        operation its analysis\n"
    "  --help                show this text\n";

struct Options {
  std::string trace;
  std::string screenshot;
  int width = 1600;
  int height = 900;
  std::optional<std::pair<double, double>> window;  // ns from the trace's start
  std::string search;
  bool help = false;
};

// "30s", "120ms", "1.5us", "800ns" in nanoseconds.
std::optional<double> parseTime(std::string_view text) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  for (const auto& [suffix, scale] : kUnits) {
    if (!text.ends_with(suffix)) continue;
    const std::string number(text.substr(0, text.size() - suffix.size()));
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(value) ||
        value < 0) {
      return std::nullopt;
    }
    return value * scale;
  }
  return std::nullopt;
}

bool parseWindow(std::string_view text, Options& options) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  const auto t0 = parseTime(text.substr(0, colon));
  const auto t1 = parseTime(text.substr(colon + 1));
  if (!t0 || !t1 || !(*t0 < *t1)) return false;
  options.window = {*t0, *t1};
  return true;
}

bool parseSize(std::string_view text, Options& options) {
  int w = 0;
  int h = 0;
  char extra = 0;
  if (std::sscanf(std::string(text).c_str(), "%dx%d%c", &w, &h, &extra) != 2) return false;
  if (w < 100 || h < 100 || w > 16384 || h > 16384) return false;
  options.width = w;
  options.height = h;
  return true;
}

// Returns an error line, or nothing when the arguments are good.
std::optional<std::string> parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool hasValue = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg == "--screenshot") {
      if (!hasValue) return "--screenshot needs an output file";
      options.screenshot = argv[++i];
    } else if (arg == "--size") {
      if (!hasValue || !parseSize(argv[++i], options)) return "--size needs WxH, e.g. 1600x900";
    } else if (arg == "--window") {
      if (!hasValue || !parseWindow(argv[++i], options)) {
        return "--window needs START:END with units, START before END, e.g. 30s:43s";
      }
    } else if (arg == "--search") {
      if (!hasValue || std::string_view(argv[i + 1]).empty()) return "--search needs a text";
      options.search = argv[++i];
    } else if (arg.starts_with("-")) {
      return "unknown option " + std::string(arg) + " (see --help)";
    } else if (!options.trace.empty()) {
      return "one trace at a time (see --help)";
    } else {
      options.trace = arg;
    }
  }
  if (!options.screenshot.empty() && options.trace.empty()) return "--screenshot needs a TRACE";
  if (options.screenshot.empty() && (options.window || !options.search.empty())) {
    return "--window and --search go with --screenshot";
  }
  return std::nullopt;
}

int fail(const std::string& message) {
  std::cerr << "rlscope-gui: " << message << '\n';
  return 1;
}

int screenshot(int argc, char** argv, const Options& options) {
  // Read before Qt starts, so that a bad file gives exactly one line on stderr.
  std::shared_ptr<const rlscope::gui::TraceDocument> doc;
  try {
    doc = rlscope::gui::openTraceFile(options.trace);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // The offscreen platform's notes (no XDG_RUNTIME_DIR, no size hints) are not the user's concern:
  // stderr keeps only real errors.
  qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& message) {
    if (type == QtCriticalMsg || type == QtFatalMsg) std::cerr << message.toStdString() << '\n';
  });
  QApplication app(argc, argv);
  rlscope::gui::MainWindow window;
  window.showDocument(std::move(doc));
  window.resize(options.width, options.height);
  window.show();
  QApplication::processEvents();
  if (!options.search.empty() &&
      window.findAndSelect(QString::fromStdString(options.search)) == 0) {
    return fail("no event name contains '" + options.search + "'");
  }
  if (options.window) {
    const double origin = static_cast<double>(window.document()->timeline.span.start);
    window.timelineView()->showWindow(origin + options.window->first,
                                      origin + options.window->second);
  }
  // The analysis runs on a worker thread: wait for it, so that the panel shows its result.
  if (window.analysisPanel()->isAnalyzing()) {
    QEventLoop loop;
    QObject::connect(window.analysisPanel(), &rlscope::gui::AnalysisPanel::analysisFinished, &loop,
                     &QEventLoop::quit);
    QTimer::singleShot(kAnalysisWaitMs, &loop, &QEventLoop::quit);
    loop.exec();
  }
  QApplication::processEvents();
  // QSaveFile writes beside the target and renames: a failed save leaves no half-written PNG.
  QSaveFile file(QString::fromStdString(options.screenshot));
  if (!file.open(QIODevice::WriteOnly) || !window.grab().toImage().save(&file, "PNG") ||
      !file.commit()) {
    return fail("cannot write " + options.screenshot);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (auto error = parse(argc, argv, options)) return fail(*error);
  if (options.help) {
    std::cout << kUsage;
    return 0;
  }
  if (!options.screenshot.empty()) return screenshot(argc, argv, options);
  QApplication app(argc, argv);
  // Where QSettings keeps the recent files.
  QApplication::setOrganizationName(QStringLiteral("rlscope"));
  QApplication::setApplicationName(QStringLiteral("rlscope-gui"));
  rlscope::gui::MainWindow window;
  window.resize(options.width, options.height);
  window.show();
  if (!options.trace.empty()) window.openFile(QString::fromStdString(options.trace));
  return QApplication::exec();
}
