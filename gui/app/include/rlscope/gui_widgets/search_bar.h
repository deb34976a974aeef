// The search bar: a pattern, whether it is a regular expression and whether case matters, and
// previous / next buttons with "3 of 120" beside them. It only collects what the user asks and
// shows the answer; the main window searches (event_search.h).
#pragma once

#include <QString>
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QTimer;
class QToolButton;

namespace rlscope::gui {

struct SearchRequest {
  QString pattern;
  bool regex = false;
  bool caseSensitive = false;
};

class SearchBar : public QWidget {
  Q_OBJECT

 public:
  explicit SearchBar(QWidget* parent = nullptr);

  SearchRequest request() const;
  // Shows a request, as if typed (without waiting for the typing pause or emitting changed).
  void setRequest(const SearchRequest& request);
  // "3 of 120" (current is 1-based; 0 when none is selected), "no match", or an error (a bad
  // regular expression) in red.
  void showResult(int current, int total);
  void showError(const QString& message);
  QString resultText() const;
  void focusPattern();
  QLineEdit* patternEdit() const { return pattern_; }

 signals:
  // The pattern or an option changed (after a short pause in typing).
  void changed();
  void next();
  void previous();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QLineEdit* pattern_;
  QCheckBox* regex_;
  QCheckBox* caseSensitive_;
  QToolButton* previous_;
  QToolButton* next_;
  QLabel* result_;
  QTimer* typing_;  // the pause after typing before `changed`
};

}  // namespace rlscope::gui
