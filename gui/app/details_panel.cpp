#include "rlscope/gui_widgets/details_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace rlscope::gui {

namespace {
// Links beyond this many are summarised: a memcpy-heavy call can launch thousands.
constexpr int kMaxLinkButtons = 50;
constexpr int kMaxLinkText = 100;  // characters of a link's button
}  // namespace

DetailsPanel::DetailsPanel(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      fields_(new QTreeWidget(this)),
      linkBox_(new QWidget(this)),
      linkLayout_(new QVBoxLayout(linkBox_)) {
  auto* layout = new QVBoxLayout(this);
  title_->setWordWrap(true);
  title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // long names wrap or clip
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  fields_->setColumnCount(2);
  fields_->setHeaderLabels({tr("Field"), tr("Value")});
  fields_->setRootIsDecorated(false);
  fields_->setAlternatingRowColors(true);
  fields_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  fields_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  fields_->setWordWrap(true);
  linkLayout_->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(fields_, 1);
  layout->addWidget(linkBox_);
  clear();
}

void DetailsPanel::clear() {
  showEvent(tr("Click an event to see its details"), {}, {});
}

void DetailsPanel::showEvent(const QString& title, const std::vector<Field>& fields,
                             const std::vector<QString>& links) {
  title_->setText(title);
  fields_->clear();
  QList<QTreeWidgetItem*> items;
  for (const auto& [label, value] : fields) {
    auto* item = new QTreeWidgetItem({label, value});
    item->setToolTip(1, value);
    items.append(item);
  }
  fields_->addTopLevelItems(items);
  for (QWidget* w : linkButtons_) delete w;
  linkButtons_.clear();
  const int shown = std::min<int>(static_cast<int>(links.size()), kMaxLinkButtons);
  linkCount_ = shown;
  for (int i = 0; i < shown; ++i) {
    // Kernel names run to thousands of characters: elided here, whole in the tooltip, and the
    // button never asks for more width than the dock has.
    const QString full = tr("→ %1").arg(links[i]);
    auto* button = new QPushButton(
        full.size() > kMaxLinkText ? full.left(kMaxLinkText - 1) + QStringLiteral("…") : full,
        linkBox_);
    button->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    button->setToolTip(full + tr("\nSelect it on the timeline (or double-click the event)"));
    button->setStyleSheet(QStringLiteral("text-align: left"));
    connect(button, &QPushButton::clicked, this, [this, i] { emit linkActivated(i); });
    linkLayout_->addWidget(button);
    linkButtons_.push_back(button);
  }
  if (static_cast<int>(links.size()) > shown) {
    auto* more = new QLabel(tr("… and %1 more").arg(links.size() - shown), linkBox_);
    linkLayout_->addWidget(more);
    linkButtons_.push_back(more);
  }
  linkBox_->setVisible(!links.empty());
}

QString DetailsPanel::title() const {
  return title_->text();
}

QString DetailsPanel::field(const QString& label) const {
  for (int i = 0; i < fields_->topLevelItemCount(); ++i) {
    if (fields_->topLevelItem(i)->text(0) == label) return fields_->topLevelItem(i)->text(1);
  }
  return {};
}

}  // namespace rlscope::gui
