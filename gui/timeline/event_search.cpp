#include "rlscope/gui_model/event_search.h"

#include <pthread.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <limits>
#include <regex>
#include <string_view>
#include <tuple>

namespace rlscope::gui {

namespace {

char lowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lowerAscii(c);
  return out;
}

bool equalsIgnoreCase(std::string_view text, std::string_view lowerQuery) {
  return text.size() == lowerQuery.size() &&
         std::equal(text.begin(), text.end(), lowerQuery.begin(),
                    [](char a, char b) { return lowerAscii(a) == b; });
}

bool containsIgnoreCase(std::string_view text, std::string_view lowerQuery) {
  return std::search(text.begin(), text.end(), lowerQuery.begin(), lowerQuery.end(),
                     [](char a, char b) { return lowerAscii(a) == b; }) != text.end();
}

// Runs fn on a thread with a stack of `bytes` and waits for it. False when no such thread can be
// started (fn has not run then).
bool runWithStack(std::size_t bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_t thread;
  bool started = pthread_attr_setstacksize(&attr, bytes) == 0 &&
                 pthread_create(
                     &thread, &attr,
                     [](void* f) -> void* {
                       (*static_cast<const std::function<void()>*>(f))();
                       return nullptr;
                     },
                     const_cast<std::function<void()>*>(&fn)) == 0;
  pthread_attr_destroy(&attr);
  if (started) pthread_join(thread, nullptr);
  return started;
}

// Marks the names that match a regular expression. The engine (libstdc++'s) recurses per
// character of the text, and its parser per nesting level of the expression: a 16 KiB name takes
// a few MB of stack in a sanitizer build. So compiling and matching run on a thread with 256 MiB
// of stack (reserved; touched only as deep as it goes).
void matchRegex(const StringTable& strings, const SearchQuery& query,
                std::vector<std::uint8_t>& matched) {
  auto flags = std::regex::ECMAScript;
  if (!query.caseSensitive) flags |= std::regex::icase;
  std::size_t maxText = EventSearch::kMaxRegexText;
  bool compiled = false;
  std::exception_ptr error;
  std::function<void()> run = [&] {
    try {
      std::regex re(query.text, flags);
      compiled = true;
      for (std::uint32_t id = 1; id < matched.size(); ++id) {
        std::string_view text = strings[id].substr(0, maxText);
        matched[id] = std::regex_search(text.begin(), text.end(), re);
      }
    } catch (...) {
      error = std::current_exception();
    }
  };
  if (!runWithStack(std::size_t{256} << 20, run)) {
    maxText = 1024;  // no thread to be had: this one's stack, and shorter texts
    run();
  }
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::regex_error& e) {
    // Matching can fail too: libstdc++ gives up on some expressions (error_complexity).
    throw InvalidSearch((compiled ? "regular expression '" + query.text + "' is too complex: "
                                  : "invalid regular expression '" + query.text + "': ") +
                        e.what());
  }
}

}  // namespace

EventSearch::EventSearch(const TimelineData& data, const SearchQuery& query) {
  data.forEachTrack([&](const Track& t) { tracks_.push_back(&t); });
  for (std::uint32_t i = 0; i < tracks_.size(); ++i) byPointer_.emplace_back(tracks_[i], i);
  std::sort(byPointer_.begin(), byPointer_.end(), [](const auto& a, const auto& b) {
    return std::less<const Track*>()(a.first, b.first);
  });
  trackMatches_.resize(tracks_.size());
  matchedNames_.assign(data.strings.size(), 0);
  if (query.text.empty()) return;

  // 1. Which names match: once per distinct name.
  if (query.mode == SearchQuery::Mode::kRegex) {
    matchRegex(data.strings, query, matchedNames_);
  } else {
    std::string q = query.caseSensitive ? query.text : lowered(query.text);
    bool exact = query.mode == SearchQuery::Mode::kExact;
    for (std::uint32_t id = 1; id < matchedNames_.size(); ++id) {
      std::string_view name = data.strings[id];
      matchedNames_[id] = query.caseSensitive ? (exact ? name == q : name.find(q) != name.npos)
                          : exact             ? equalsIgnoreCase(name, q)
                                              : containsIgnoreCase(name, q);
    }
  }
  matchedNameCount_ =
      static_cast<std::size_t>(std::count(matchedNames_.begin(), matchedNames_.end(), 1));
  if (matchedNameCount_ == 0) return;

  // 2. Count the matching items, for an exact allocation.
  constexpr std::size_t kMaxIndex = std::numeric_limits<std::uint32_t>::max();
  std::size_t total = 0;
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    const auto& items = tracks_[t]->row.items();
    std::size_t n = std::min(items.size(), kMaxIndex), inTrack = 0;
    for (std::size_t i = 0; i < n; ++i) inTrack += matchesName(items[i].nameId);
    trackMatches_[t].reserve(inTrack);
    total += inTrack;
  }
  matches_.reserve(total);

  // 3. Merge the tracks' matches into time order: a heap of one cursor per track, ordered by the
  // start of its next match (then by track); the top cursor emits matches until another's is
  // earlier, so a track's run of matches costs one comparison each, not a heap operation.
  struct Cursor {
    TimeNs start;
    std::uint32_t track;
    std::uint32_t item;
  };
  auto later = [](const Cursor& a, const Cursor& b) {
    return a.start != b.start ? a.start > b.start : a.track > b.track;
  };
  // Moves c to its track's next match at or after c.item; false when there is none.
  auto seek = [&](Cursor& c) {
    const auto& items = tracks_[c.track]->row.items();
    std::size_t n = std::min(items.size(), kMaxIndex);
    for (std::size_t i = c.item; i < n; ++i) {
      if (matchesName(items[i].nameId)) {
        c.item = static_cast<std::uint32_t>(i);
        c.start = items[i].start;
        return true;
      }
    }
    return false;
  };
  std::vector<Cursor> heap;
  for (std::uint32_t t = 0; t < tracks_.size(); ++t) {
    Cursor c{0, t, 0};
    if (seek(c)) heap.push_back(c);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Cursor c = heap.back();
    heap.pop_back();
    bool more = true;
    do {
      matches_.push_back({c.track, c.item});
      trackMatches_[c.track].push_back(c.item);
      ++c.item;
      more = seek(c);
    } while (more && (heap.empty() || later(heap.front(), c)));
    if (more) {
      heap.push_back(c);
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
}

ItemLocation EventSearch::match(std::size_t i) const {
  return {tracks_[matches_[i].track], matches_[i].item};
}

std::optional<std::size_t> EventSearch::next(TimeNs t) const {
  if (matches_.empty()) return std::nullopt;
  auto it = std::upper_bound(matches_.begin(), matches_.end(), t,
                             [&](TimeNs v, const Match& m) { return v < startOf(m); });
  return it == matches_.end() ? 0 : static_cast<std::size_t>(it - matches_.begin());
}

std::optional<std::size_t> EventSearch::previous(TimeNs t) const {
  if (matches_.empty()) return std::nullopt;
  auto it = std::lower_bound(matches_.begin(), matches_.end(), t,
                             [&](const Match& m, TimeNs v) { return startOf(m) < v; });
  return it == matches_.begin() ? matches_.size() - 1
                                : static_cast<std::size_t>(it - matches_.begin()) - 1;
}

std::optional<std::size_t> EventSearch::nextAfter(std::size_t i) const {
  if (matches_.empty()) return std::nullopt;
  return i + 1 < matches_.size() ? i + 1 : 0;
}

std::optional<std::size_t> EventSearch::previousBefore(std::size_t i) const {
  if (matches_.empty()) return std::nullopt;
  return i > 0 && i <= matches_.size() ? i - 1 : matches_.size() - 1;
}

std::optional<std::uint32_t> EventSearch::trackIndex(const Track* track) const {
  auto it = std::lower_bound(
      byPointer_.begin(), byPointer_.end(), track,
      [](const auto& a, const Track* t) { return std::less<const Track*>()(a.first, t); });
  if (it == byPointer_.end() || it->first != track) return std::nullopt;
  return it->second;
}

bool EventSearch::matchesAny(const Track& track, std::size_t first, std::size_t count) const {
  auto t = trackIndex(&track);
  if (!t || count == 0) return false;
  const auto& items = trackMatches_[*t];
  auto it = std::lower_bound(items.begin(), items.end(), first);
  return it != items.end() && *it - first < count;
}

std::optional<std::size_t> EventSearch::indexOf(const ItemLocation& location) const {
  auto t = trackIndex(location.track);
  if (!t || !location.valid()) return std::nullopt;
  Match key{*t, static_cast<std::uint32_t>(location.index)};
  auto keyOrder = std::tuple(location.item().start, key.track, key.item);
  // Matches are in (start, track, item) order.
  auto it = std::partition_point(matches_.begin(), matches_.end(), [&](const Match& m) {
    return std::tuple(startOf(m), m.track, m.item) < keyOrder;
  });
  if (it == matches_.end() || it->track != key.track || it->item != key.item) return std::nullopt;
  return static_cast<std::size_t>(it - matches_.begin());
}

std::size_t EventSearch::memoryBytes() const {
  std::size_t bytes = matches_.capacity() * sizeof(Match) + matchedNames_.capacity() +
                      tracks_.capacity() * sizeof(const Track*) +
                      byPointer_.capacity() * sizeof(byPointer_[0]) +
                      trackMatches_.capacity() * sizeof(trackMatches_[0]);
  for (const auto& m : trackMatches_) bytes += m.capacity() * sizeof(std::uint32_t);
  return bytes;
}

}  // namespace rlscope::gui
