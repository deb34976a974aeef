// Where an item is in the timeline: its track and its index in the track's row. What the
// correlation index links, a search finds and the timeline widget selects.
#pragma once

#include <cstddef>

#include "rlscope/gui_model/timeline_data.h"

namespace rlscope::gui {

struct ItemLocation {
  const Track* track = nullptr;
  std::size_t index = 0;  // in track->row

  bool valid() const { return track && index < track->row.size(); }
  const TrackItem& item() const { return track->row[index]; }
  bool operator==(const ItemLocation&) const = default;
};

}  // namespace rlscope::gui
