// The QApplication the widget tests share, created on first use, off screen. It is never
// destroyed: at exit QTest's static input devices go first, and an application destroyed after
// them would delete them again.
#pragma once

#include <QApplication>

namespace rlscope::testing {

inline QApplication& qtApp() {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  static int argc = 1;
  static char name[] = "gui_widget_tests";
  static char* argv[] = {name, nullptr};
  static QApplication* app = new QApplication(argc, argv);
  return *app;
}

}  // namespace rlscope::testing
