#include "timeline_layout.h"

#include <utility>

namespace rlscope::gui {

TimelineLayout::TimelineLayout(const TimelineData& data) {
  for (const ProcessTracks& process : data.processes) {
    add(process.label, 0, nullptr);
    for (const ThreadTracks& thread : process.threads) {
      add(thread.label, 1, nullptr);
      for (const Track& track : thread.tracks) add(track.label, 2, &track);
    }
  }
  for (const DeviceTracks& device : data.devices) {
    add(device.label, 0, nullptr);
    for (const Track& stream : device.streams) add(stream.label, 1, &stream);
  }
}

void TimelineLayout::add(std::string label, int indent, const Track* track) {
  const int h = track ? kTrackHeight : kHeaderHeight;
  rows_.push_back({std::move(label), indent, track, height(), h});
}

}  // namespace rlscope::gui
