#include "rlscope/gui_widgets/timeline_layout.h"

#include <utility>

namespace rlscope::gui {

namespace {
// Appending rather than `"p" + std::to_string(id)`, which g++ 12 warns about (-Wrestrict, a known
// false positive).
std::string key(char kind, std::int64_t id) {
  std::string k(1, kind);
  k += std::to_string(id);
  return k;
}
std::string processKey(const ProcessTracks& p) {
  return key('p', p.globalPid);
}
std::string threadKey(const ThreadTracks& t) {
  return key('t', t.globalTid);
}
std::string deviceKey(const DeviceTracks& d) {
  return key('d', d.deviceId);
}
}  // namespace

TimelineLayout::TimelineLayout(const TimelineData& data, const std::set<std::string>& collapsed) {
  for (const ProcessTracks& process : data.processes) {
    if (!add(process.label, 0, nullptr, processKey(process), collapsed)) continue;
    for (const ThreadTracks& thread : process.threads) {
      if (!add(thread.label, 1, nullptr, threadKey(thread), collapsed)) continue;
      for (const Track& track : thread.tracks) add(track.label, 2, &track);
    }
  }
  for (const DeviceTracks& device : data.devices) {
    if (!add(device.label, 0, nullptr, deviceKey(device), collapsed)) continue;
    for (const Track& stream : device.streams) add(stream.label, 1, &stream);
  }
}

bool TimelineLayout::add(std::string label, int indent, const Track* track, std::string key,
                         const std::set<std::string>& collapsed) {
  const int h = track ? kTrackHeight : kHeaderHeight;
  const bool isCollapsed = !key.empty() && collapsed.contains(key);
  rows_.push_back({std::move(label), indent, track, std::move(key), isCollapsed, height(), h});
  return !isCollapsed;
}

const LayoutRow* TimelineLayout::rowOf(const Track* track) const {
  for (const LayoutRow& row : rows_) {
    if (row.track == track) return &row;
  }
  return nullptr;
}

std::vector<std::string> TimelineLayout::headersOf(const TimelineData& data, const Track* track) {
  for (const ProcessTracks& process : data.processes) {
    for (const ThreadTracks& thread : process.threads) {
      for (const Track& t : thread.tracks) {
        if (&t == track) return {processKey(process), threadKey(thread)};
      }
    }
  }
  for (const DeviceTracks& device : data.devices) {
    for (const Track& s : device.streams) {
      if (&s == track) return {deviceKey(device)};
    }
  }
  return {};
}

}  // namespace rlscope::gui
