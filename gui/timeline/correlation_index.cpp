#include "rlscope/gui_model/correlation_index.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <utility>

namespace rlscope::gui {

namespace {

using Entry = CorrelationIndex::Entry;

bool isCall(ItemSource s) {
  return s == ItemSource::kRuntime || s == ItemSource::kDriver;
}
bool isActivity(ItemSource s) {
  return s == ItemSource::kKernel || s == ItemSource::kMemcpy || s == ItemSource::kMemset;
}

std::uint64_t keyOf(const Entry& e) {
  return (std::uint64_t{e.process} << 32) | e.correlation;
}
bool keyLess(const Entry& a, const Entry& b) {
  return keyOf(a) < keyOf(b);
}

// Sorts by key, stably: entries come in ordinal order, and equal keys keep it. An LSD radix sort
// of 8-bit digits that skips the digits all keys share (the process digits of a one-process trace,
// the top bits of the correlation ids): usually 3 passes over the entries instead of the
// n log n comparisons of a sort. Entries already in order (one API thread) are left as they are.
void sortByKey(std::vector<Entry>& entries) {
  if (std::is_sorted(entries.begin(), entries.end(), keyLess)) return;
  constexpr int kDigits = 8;
  std::array<std::array<std::size_t, 256>, kDigits> counts{};
  for (const Entry& e : entries) {
    std::uint64_t k = keyOf(e);
    for (int d = 0; d < kDigits; ++d) ++counts[d][(k >> (8 * d)) & 0xFF];
  }
  std::vector<Entry> scratch(entries.size());
  for (int d = 0; d < kDigits; ++d) {
    auto& c = counts[d];
    if (std::find(c.begin(), c.end(), entries.size()) != c.end()) continue;  // one value
    std::size_t offset = 0;
    for (auto& n : c) offset += std::exchange(n, offset);
    for (const Entry& e : entries) scratch[c[(keyOf(e) >> (8 * d)) & 0xFF]++] = e;
    entries.swap(scratch);
  }
}

}  // namespace

CorrelationIndex::CorrelationIndex(const TimelineData& data) {
  data.forEachTrack([&](const Track& t) { tracks_.push_back(&t); });
  std::vector<std::int64_t> pids;
  for (const Track* t : tracks_) pids.push_back(t->globalPid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());

  std::size_t callCount = 0, activityCount = 0;
  std::uint64_t ordinal = 0;
  for (std::uint32_t i = 0; i < tracks_.size(); ++i) {
    const Track& t = *tracks_[i];
    firstOrdinal_.push_back(ordinal);
    process_.push_back(static_cast<std::uint32_t>(
        std::lower_bound(pids.begin(), pids.end(), t.globalPid) - pids.begin()));
    trackIndex_.emplace_back(&t, i);
    ordinal += t.row.size();
    if (ordinal > std::numeric_limits<std::uint32_t>::max()) continue;  // not indexed (> 4 G)
    for (const TrackItem& x : t.row.items()) {
      if (x.correlationId == 0) continue;
      callCount += isCall(x.source);
      activityCount += isActivity(x.source);
    }
  }
  firstOrdinal_.push_back(ordinal);
  std::sort(trackIndex_.begin(), trackIndex_.end(), [](const auto& a, const auto& b) {
    return std::less<const Track*>()(a.first, b.first);
  });

  calls_.reserve(callCount);
  activities_.reserve(activityCount);
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    if (firstOrdinal_[i + 1] > std::numeric_limits<std::uint32_t>::max()) break;
    const auto& items = tracks_[i]->row.items();
    auto first = static_cast<std::uint32_t>(firstOrdinal_[i]);
    for (std::uint32_t j = 0; j < items.size(); ++j) {
      const TrackItem& x = items[j];
      if (x.correlationId == 0) continue;
      Entry e{process_[i], x.correlationId, first + j};
      if (isCall(x.source)) calls_.push_back(e);
      if (isActivity(x.source)) activities_.push_back(e);
    }
  }
  sortByKey(calls_);
  sortByKey(activities_);
}

std::pair<const Entry*, const Entry*> CorrelationIndex::linkedRange(const Track& track,
                                                                    std::size_t item) const {
  auto it = std::lower_bound(
      trackIndex_.begin(), trackIndex_.end(), &track,
      [](const auto& a, const Track* t) { return std::less<const Track*>()(a.first, t); });
  if (it == trackIndex_.end() || it->first != &track || item >= track.row.size()) return {};
  const TrackItem& x = track.row[item];
  if (x.correlationId == 0) return {};
  const std::vector<Entry>* other = isCall(x.source)       ? &activities_
                                    : isActivity(x.source) ? &calls_
                                                           : nullptr;
  if (!other) return {};
  Entry key{process_[it->second], x.correlationId, 0};
  auto [first, last] = std::equal_range(other->begin(), other->end(), key, keyLess);
  return {other->data() + (first - other->begin()), other->data() + (last - other->begin())};
}

ItemLocation CorrelationIndex::locate(std::uint32_t ordinal) const {
  auto t = std::upper_bound(firstOrdinal_.begin(), firstOrdinal_.end(), ordinal) -
           firstOrdinal_.begin() - 1;
  return {tracks_[static_cast<std::size_t>(t)],
          ordinal - firstOrdinal_[static_cast<std::size_t>(t)]};
}

std::vector<ItemLocation> CorrelationIndex::linked(const Track& track, std::size_t item,
                                                   std::size_t limit) const {
  auto [first, last] = linkedRange(track, item);
  std::vector<ItemLocation> out;
  if (first == last) return out;
  out.reserve(static_cast<std::size_t>(last - first));
  for (const Entry* e = first; e != last; ++e) out.push_back(locate(e->ordinal));
  // Ordinals are in track order; a call's kernels on several streams go by time.
  std::stable_sort(out.begin(), out.end(), [](const ItemLocation& a, const ItemLocation& b) {
    return a.item().start < b.item().start;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::size_t CorrelationIndex::linkedCount(const Track& track, std::size_t item) const {
  auto [first, last] = linkedRange(track, item);
  return static_cast<std::size_t>(last - first);
}

std::size_t CorrelationIndex::memoryBytes() const {
  return calls_.capacity() * sizeof(Entry) + activities_.capacity() * sizeof(Entry) +
         tracks_.capacity() * sizeof(const Track*) +
         firstOrdinal_.capacity() * sizeof(std::uint64_t) +
         process_.capacity() * sizeof(std::uint32_t) +
         trackIndex_.capacity() * sizeof(trackIndex_[0]);
}

}  // namespace rlscope::gui
