// The details of the selected event: a title and every field as a two-column table, and the
// events it is linked to (a CUDA call's kernels and copies, a GPU activity's launching call) as
// buttons that follow the link. It only shows what it is given: the main window reads the
// fields (event_details.h) and the links (correlation_index.h).
#pragma once

#include <QString>
#include <QWidget>
#include <utility>
#include <vector>

class QLabel;
class QTreeWidget;
class QVBoxLayout;

namespace rlscope::gui {

class DetailsPanel : public QWidget {
  Q_OBJECT

 public:
  using Field = std::pair<QString, QString>;

  explicit DetailsPanel(QWidget* parent = nullptr);

  // Shows an event; `links` are the texts of the events it is linked to, in order.
  void showEvent(const QString& title, const std::vector<Field>& fields,
                 const std::vector<QString>& links);
  void clear();

  QString title() const;
  // The value of a field by its label; empty when there is none.
  QString field(const QString& label) const;
  // The links offered as buttons (at most 50; more are counted in a line below them).
  int linkCount() const { return linkCount_; }

 signals:
  // The user asked to go to link i of the event shown.
  void linkActivated(int index);

 private:
  QLabel* title_;
  QTreeWidget* fields_;
  QWidget* linkBox_;
  QVBoxLayout* linkLayout_;
  std::vector<QWidget*> linkButtons_;  // and the "… more" line
  int linkCount_ = 0;
};

}  // namespace rlscope::gui
