#include "rlscope/gui_widgets/search_bar.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QTimer>
#include <QToolButton>

namespace rlscope::gui {

namespace {
// Searching a 10 M-event trace takes a moment: wait for a pause in typing.
constexpr int kTypingPauseMs = 200;
}  // namespace

SearchBar::SearchBar(QWidget* parent)
    : QWidget(parent),
      pattern_(new QLineEdit(this)),
      regex_(new QCheckBox(tr("Regex"), this)),
      caseSensitive_(new QCheckBox(tr("Match case"), this)),
      previous_(new QToolButton(this)),
      next_(new QToolButton(this)),
      result_(new QLabel(this)) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  pattern_->setPlaceholderText(tr("Search events by name (Ctrl+F)"));
  pattern_->setClearButtonEnabled(true);
  previous_->setText(tr("◀"));
  previous_->setToolTip(tr("Previous match (Shift+Enter)"));
  next_->setText(tr("▶"));
  next_->setToolTip(tr("Next match (Enter)"));
  result_->setMinimumWidth(120);
  layout->addWidget(pattern_, 1);
  layout->addWidget(regex_);
  layout->addWidget(caseSensitive_);
  layout->addWidget(previous_);
  layout->addWidget(next_);
  layout->addWidget(result_);

  auto* typing = new QTimer(this);
  typing->setSingleShot(true);
  typing->setInterval(kTypingPauseMs);
  connect(typing, &QTimer::timeout, this, &SearchBar::changed);
  connect(pattern_, &QLineEdit::textChanged, typing, qOverload<>(&QTimer::start));
  connect(regex_, &QCheckBox::toggled, this, &SearchBar::changed);
  connect(caseSensitive_, &QCheckBox::toggled, this, &SearchBar::changed);
  typing_ = typing;
  pattern_->installEventFilter(this);  // Enter and Shift+Enter step through the matches
  connect(previous_, &QToolButton::clicked, this, &SearchBar::previous);
  connect(next_, &QToolButton::clicked, this, &SearchBar::next);
}

bool SearchBar::eventFilter(QObject* watched, QEvent* event) {
  if (watched != pattern_ || event->type() != QEvent::KeyPress) return false;
  auto* key = static_cast<QKeyEvent*>(event);
  if (key->key() != Qt::Key_Return && key->key() != Qt::Key_Enter) return false;
  // Enter right after typing searches first, then goes to the match.
  if (typing_->isActive()) {
    typing_->stop();
    emit changed();
  }
  if (key->modifiers() & Qt::ShiftModifier) {
    emit previous();
  } else {
    emit next();
  }
  return true;
}

SearchRequest SearchBar::request() const {
  return {pattern_->text(), regex_->isChecked(), caseSensitive_->isChecked()};
}

void SearchBar::setRequest(const SearchRequest& request) {
  const QSignalBlocker blockPattern(pattern_);
  const QSignalBlocker blockRegex(regex_);
  const QSignalBlocker blockCase(caseSensitive_);
  pattern_->setText(request.pattern);
  regex_->setChecked(request.regex);
  caseSensitive_->setChecked(request.caseSensitive);
}

void SearchBar::showResult(int current, int total) {
  result_->setStyleSheet(QString());
  if (pattern_->text().isEmpty()) {
    result_->clear();
  } else if (total == 0) {
    result_->setText(tr("no match"));
  } else if (current == 0) {
    result_->setText(total == 1 ? tr("1 match") : tr("%1 matches").arg(total));
  } else {
    result_->setText(tr("%1 of %2").arg(current).arg(total));
  }
  previous_->setEnabled(total > 0);
  next_->setEnabled(total > 0);
}

void SearchBar::showError(const QString& message) {
  result_->setStyleSheet(QStringLiteral("color: #c00"));
  result_->setText(message);
  result_->setToolTip(message);
  previous_->setEnabled(false);
  next_->setEnabled(false);
}

QString SearchBar::resultText() const {
  return result_->text();
}

void SearchBar::focusPattern() {
  pattern_->setFocus();
  pattern_->selectAll();
}

}  // namespace rlscope::gui
