// The rows of a TimelineView from top to bottom: a header per process, thread and GPU device,
// and one row per track (its label indented under its thread or device). No Qt: a list of
// labels and y offsets that the view paints and the tests locate tracks by.
#pragma once

#include <string>
#include <vector>

#include "timeline_data.h"

namespace rlscope::gui {

struct LayoutRow {
  std::string label;
  int indent = 0;                // 0 process or device, 1 thread or stream, 2 track of a thread
  const Track* track = nullptr;  // null for a header
  int y = 0;                     // top, from the top of the content
  int height = 0;
};

class TimelineLayout {
 public:
  static constexpr int kHeaderHeight = 18;
  static constexpr int kTrackHeight = 20;

  TimelineLayout() = default;
  explicit TimelineLayout(const TimelineData& data);

  const std::vector<LayoutRow>& rows() const { return rows_; }
  int height() const { return rows_.empty() ? 0 : rows_.back().y + rows_.back().height; }

 private:
  void add(std::string label, int indent, const Track* track);

  std::vector<LayoutRow> rows_;
};

}  // namespace rlscope::gui
