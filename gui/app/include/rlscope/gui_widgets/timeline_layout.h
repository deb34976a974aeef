// The rows of a TimelineView from top to bottom: a header per process, thread and GPU device,
// and one row per track (its label indented under its thread or device). A header can be
// collapsed: its rows below are left out. No Qt: a list of labels and y offsets that the view
// paints and the tests locate tracks by.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "rlscope/gui_model/timeline_data.h"

namespace rlscope::gui {

struct LayoutRow {
  std::string label;
  int indent = 0;                // 0 process or device, 1 thread or stream, 2 track of a thread
  const Track* track = nullptr;  // null for a header
  std::string key;               // a header's identity across layouts ("p12", "t34", "d0")
  bool collapsed = false;        // a header whose rows below are hidden
  int y = 0;                     // top, from the top of the content
  int height = 0;
};

class TimelineLayout {
 public:
  static constexpr int kHeaderHeight = 18;
  static constexpr int kTrackHeight = 20;

  TimelineLayout() = default;
  // `collapsed` holds the keys of the headers to show collapsed.
  explicit TimelineLayout(const TimelineData& data, const std::set<std::string>& collapsed = {});

  const std::vector<LayoutRow>& rows() const { return rows_; }
  int height() const { return rows_.empty() ? 0 : rows_.back().y + rows_.back().height; }
  // The row of a track, or null when it is hidden under a collapsed header.
  const LayoutRow* rowOf(const Track* track) const;
  // The keys of the headers that hold the track (its process and thread, or its device).
  static std::vector<std::string> headersOf(const TimelineData& data, const Track* track);

 private:
  // Adds a row; returns whether its children are shown.
  bool add(std::string label, int indent, const Track* track, std::string key = {},
           const std::set<std::string>& collapsed = {});

  std::vector<LayoutRow> rows_;
};

}  // namespace rlscope::gui
