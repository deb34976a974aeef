// rlscope-gui [TRACE]: the timeline viewer. With --screenshot it renders the main window off
// screen to a PNG and exits, for scripts and CI (design.md §5).
#include <QApplication>
#include <QSaveFile>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "main_window.h"
#include "trace_file.h"

namespace {

constexpr std::string_view kUsage =
    "usage: rlscope-gui [TRACE]\n"
    "       rlscope-gui --screenshot OUT.png [--size WxH] TRACE\n"
    "\n"
    "Shows a trace (rlscope, Kineto JSON or Nsight Systems SQLite) on a timeline.\n"
    "  --screenshot OUT.png  render the window off screen, the whole trace fitted, and exit\n"
    "  --size WxH            the window's size for --screenshot (default 1600x900)\n"
    "  --help                show this text\n";

struct Options {
  std::string trace;
  std::string screenshot;
  int width = 1600;
  int height = 900;
  bool help = false;
};

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
    } else if (arg.starts_with("-")) {
      return "unknown option " + std::string(arg) + " (see --help)";
    } else if (!options.trace.empty()) {
      return "one trace at a time (see --help)";
    } else {
      options.trace = arg;
    }
  }
  if (!options.screenshot.empty() && options.trace.empty()) return "--screenshot needs a TRACE";
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
