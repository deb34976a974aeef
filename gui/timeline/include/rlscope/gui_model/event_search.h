// Finding events by name: the timeline's search box. A query (exact name, substring or regular
// expression, case-insensitive or not) is matched once per distinct name of the timeline's
// StringTable, not once per event; then every track is scanned by nameId against the matched set,
// and the matches are merged across tracks into time order. The painter asks, per block,
// matchesName(nameId) of its representative (one array look-up) or matchesAny(track, first, count)
// of all its items (a binary search in the track's matches); next/previous step through the
// matches, wrapping at either end.
//
// Names are what the timeline shows: a kernel's short name, "Memcpy HtoD", an operation's name.
// Regular expressions are ECMAScript (std::regex), found anywhere in a name (as grep does); a
// name is matched on its first kMaxRegexText bytes, and the matching runs on a thread with a large
// stack: libstdc++'s regex engine recurses once per character, and a long name would otherwise
// overflow the GUI thread's stack. Case folding is ASCII only.
//
// Memory: 12 bytes per match (the time order, and each track's matches for matchesAny), 1 byte per
// distinct name. On the 10 M-event benchmark trace (bench_gui, BM_Search, Release): a substring
// found in 2.2 M events takes 48 ms, a regex found in 0.75 M 31 ms; next(t) 1.5 µs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rlscope/gui_model/item_location.h"
#include "rlscope/gui_model/timeline_data.h"

namespace rlscope::gui {

struct SearchQuery {
  enum class Mode : std::uint8_t {
    kExact,      // the whole name
    kSubstring,  // anywhere in the name
    kRegex,      // ECMAScript regular expression, anywhere in the name
  };
  std::string text;  // an empty text matches nothing
  Mode mode = Mode::kSubstring;
  bool caseSensitive = false;
};

// A query that cannot run: an invalid regular expression. what() says why, in one line.
class InvalidSearch : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class EventSearch {
 public:
  EventSearch() = default;
  // Runs the query over `data`, which must outlive the search and not change. Throws
  // InvalidSearch for an invalid regular expression.
  EventSearch(const TimelineData& data, const SearchQuery& query);

  // For highlighting: whether items of this name match. O(1).
  bool matchesName(std::uint32_t nameId) const {
    return nameId < matchedNames_.size() && matchedNames_[nameId] != 0;
  }
  bool matches(const TrackItem& item) const { return matchesName(item.nameId); }
  std::size_t matchedNameCount() const { return matchedNameCount_; }
  // For highlighting a merged block: whether any of the items [first, first + count) of a track
  // matches. O(log n).
  bool matchesAny(const Track& track, std::size_t first, std::size_t count) const;

  // The matches, by start time; at one start in track order (forEachTrack), then by row.
  std::size_t count() const { return matches_.size(); }
  bool empty() const { return matches_.empty(); }
  ItemLocation match(std::size_t i) const;

  // The first match starting after time t, or the first of all when none does (wrapped); nullopt
  // when there are no matches.
  std::optional<std::size_t> next(TimeNs t) const;
  // The last match starting before time t, or the last of all when none does.
  std::optional<std::size_t> previous(TimeNs t) const;
  // The match after / before match i, wrapping.
  std::optional<std::size_t> nextAfter(std::size_t i) const;
  std::optional<std::size_t> previousBefore(std::size_t i) const;
  // The match index of an item, nullopt when it is not a match: where next/previous continue
  // from after the user selected an item.
  std::optional<std::size_t> indexOf(const ItemLocation& location) const;

  std::size_t memoryBytes() const;

  // Longest text of a name given to the regular expression engine.
  static constexpr std::size_t kMaxRegexText = 16 * 1024;

 private:
  struct Match {
    std::uint32_t track = 0;  // index in tracks_
    std::uint32_t item = 0;
  };
  TimeNs startOf(const Match& m) const { return tracks_[m.track]->row[m.item].start; }

  // The index of a track in tracks_; nullopt for a track of another timeline.
  std::optional<std::uint32_t> trackIndex(const Track* track) const;

  std::vector<const Track*> tracks_;                               // forEachTrack order
  std::vector<std::pair<const Track*, std::uint32_t>> byPointer_;  // tracks_ indices, by pointer
  std::vector<std::uint8_t> matchedNames_;  // by nameId: 1 when the name matches
  std::size_t matchedNameCount_ = 0;
  std::vector<Match> matches_;                            // in time order
  std::vector<std::vector<std::uint32_t>> trackMatches_;  // per track: its matching items, in order
};

}  // namespace rlscope::gui
