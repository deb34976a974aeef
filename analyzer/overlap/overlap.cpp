#include "overlap.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace rlscope::analysis {

namespace {

// One boundary of the sweep, 16 bytes: `key` orders the sweep (the time since the first
// boundary, then the kind: ends before starts at one instant); `what` packs the kind in its low
// two bits, the category or operation index above them, and an operation's listing serial on top.
struct Boundary {
  std::uint64_t key;
  std::uint64_t what;
};

enum Kind : std::uint64_t {
  kCategoryEnd = 0,
  kOperationEnd = 1,
  kCategoryStart = 2,
  kOperationStart = 3
};

constexpr std::uint64_t pack(Kind kind, std::uint64_t index, std::uint64_t serial = 0) {
  return (serial << 34) | (index << 2) | kind;
}

// A map from 64-bit keys to values, open addressing with linear probing: the sweep looks one up
// per slice, where std::unordered_map's node hops cost more than the rest of the slice.
template <class Value>
class FlatMap {
 public:
  FlatMap() : slots_(kInitial) {}

  Value& operator[](std::uint64_t key) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    Slot& s = find(slots_, key);
    if (!s.used) {
      s = {key, Value{}, true};
      ++size_;
    }
    return s.value;
  }

  template <class F>
  void forEach(F&& f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Value value{};
    bool used = false;
  };
  static constexpr std::size_t kInitial = 1024;

  static std::size_t mix(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    return static_cast<std::size_t>(k ^ (k >> 33));
  }
  static Slot& find(std::vector<Slot>& slots, std::uint64_t key) {
    std::size_t mask = slots.size() - 1;
    for (std::size_t i = mix(key) & mask;; i = (i + 1) & mask)
      if (!slots[i].used || slots[i].key == key) return slots[i];
  }
  void grow() {
    std::vector<Slot> bigger(slots_.size() * 2);
    for (const Slot& s : slots_)
      if (s.used) find(bigger, s.key) = s;
    slots_.swap(bigger);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

// Time per (operation, set). The owner changes only at operation boundaries while the set
// changes every slice, so the current owner's times are kept in a small array indexed by set and
// written out as cells when the owner changes; an owner that comes back (an outer operation after
// an inner one) adds cells again, combined at the end.
class OwnerTimes {
 public:
  void add(std::uint32_t owner, std::uint32_t set, TimeNs ns) {
    if (owner != owner_) flush(owner);
    if (set >= bySet_.size()) bySet_.resize(set + 1, 0);
    if (bySet_[set] == 0) touched_.push_back(set);
    bySet_[set] += ns;
  }

  // The cells, sorted by operation then set, each (operation, set) once.
  std::vector<OverlapResult::Cell> cells() {
    flush(owner_);
    auto before = [](const auto& x, const auto& y) {
      return x.operation != y.operation ? x.operation < y.operation : x.set < y.set;
    };
    // Operations numbered in start order leave the cells nearly sorted already.
    if (!std::is_sorted(cells_.begin(), cells_.end(), before))
      std::sort(cells_.begin(), cells_.end(), before);
    std::vector<OverlapResult::Cell> out;
    for (const auto& c : cells_) {
      if (!out.empty() && out.back().operation == c.operation && out.back().set == c.set)
        out.back().time += c.time;
      else
        out.push_back(c);
    }
    return out;
  }

 private:
  void flush(std::uint32_t next) {
    for (std::uint32_t set : touched_) {
      cells_.push_back({owner_, set, bySet_[set]});
      bySet_[set] = 0;
    }
    touched_.clear();
    owner_ = next;
  }

  std::uint32_t owner_ = kUnannotated;
  std::vector<TimeNs> bySet_;
  std::vector<std::uint32_t> touched_;
  std::vector<OverlapResult::Cell> cells_;
};

// The active categories as a growable bitset, with a Zobrist hash kept up to date so that the
// set's id is found by one hash lookup per change.
class ActiveCategories {
 public:
  void add(std::uint32_t c) {
    if (count(c)++ == 0) flip(c);
  }
  void remove(std::uint32_t c) {
    if (--count(c) == 0) flip(c);
  }
  std::uint64_t hash() const { return hash_; }
  const std::vector<std::uint64_t>& bits() const { return bits_; }

  std::vector<std::uint32_t> members() const {
    std::vector<std::uint32_t> out;
    for (std::size_t w = 0; w < bits_.size(); ++w)
      for (std::uint64_t b = bits_[w]; b; b &= b - 1)
        out.push_back(
            static_cast<std::uint32_t>(w * 64 + static_cast<unsigned>(__builtin_ctzll(b))));
    return out;
  }

 private:
  int& count(std::uint32_t c) {
    if (c >= counts_.size()) counts_.resize(c + 1, 0);
    return counts_[c];
  }
  void flip(std::uint32_t c) {
    if (c / 64 >= bits_.size()) bits_.resize(c / 64 + 1, 0);
    bits_[c / 64] ^= std::uint64_t{1} << (c % 64);
    hash_ ^= key(c);
  }
  static std::uint64_t key(std::uint32_t c) {  // splitmix64 of the index
    std::uint64_t z = (std::uint64_t{c} + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::vector<int> counts_;
  std::vector<std::uint64_t> bits_;
  std::uint64_t hash_ = 0;
};

// Interns category sets: the same set of active categories gets the same id.
class SetTable {
 public:
  SetTable() {
    sets_.push_back({});
    first_[0] = 1;  // the empty set, id 0 (ids are stored + 1: 0 means none yet)
  }

  std::uint32_t idOf(const ActiveCategories& active) {
    // The first set seen with this hash, then (64-bit hash collisions are not expected, but
    // must not mix sets up) the others.
    std::uint32_t& first = first_[active.hash()];
    if (first && sameSet(bits_[first - 1], active.bits())) return first - 1;
    if (first)
      for (std::uint32_t id : collisions_[active.hash()])
        if (sameSet(bits_[id], active.bits())) return id;
    auto id = static_cast<std::uint32_t>(sets_.size());
    sets_.push_back(active.members());
    bits_.push_back(trimmed(active.bits()));
    if (!first)
      first = id + 1;
    else
      collisions_[active.hash()].push_back(id);
    return id;
  }

  std::vector<std::vector<std::uint32_t>> release() { return std::move(sets_); }

 private:
  // Bitsets equal but for trailing zero words.
  static bool sameSet(const std::vector<std::uint64_t>& stored,
                      const std::vector<std::uint64_t>& bits) {
    if (bits.size() < stored.size()) return false;
    for (std::size_t i = 0; i < bits.size(); ++i)
      if (bits[i] != (i < stored.size() ? stored[i] : 0)) return false;
    return true;
  }

  static std::vector<std::uint64_t> trimmed(std::vector<std::uint64_t> b) {
    while (!b.empty() && b.back() == 0) b.pop_back();
    return b;
  }

  std::vector<std::vector<std::uint32_t>> sets_;
  std::vector<std::vector<std::uint64_t>> bits_{{}};
  FlatMap<std::uint32_t> first_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> collisions_;
};

// The active operations in the order they started; the owner is the last one still active.
// Ended operations are dropped lazily when they reach the back.
class ActiveOperations {
 public:
  void start(std::uint64_t serial, std::uint32_t operation) {
    if (serial >= ended_.size()) ended_.resize(serial + 1, false);
    stack_.push_back({serial, operation});
  }
  void end(std::uint64_t serial) {
    ended_[serial] = true;
    while (!stack_.empty() && ended_[stack_.back().serial]) stack_.pop_back();
  }
  std::uint32_t owner() const { return stack_.empty() ? kUnannotated : stack_.back().operation; }

 private:
  struct Entry {
    std::uint64_t serial;
    std::uint32_t operation;
  };
  std::vector<Entry> stack_;
  std::vector<bool> ended_;
};

// Stable LSD radix sort on `key`, 11 bits a pass, skipping passes whose digit is the same in
// every key (the high bits of times within one run): a few linear passes instead of a
// comparison sort of tens of millions of boundaries. Stable, so boundaries with equal keys keep
// the order they were listed in (operations starting together: parents first).
void sortByKey(std::vector<Boundary>& b) {
  constexpr int kBits = 11;  // 2048 buckets: the counts and write heads stay in cache
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::uint64_t all = 0, any = 0;
  for (const auto& x : b) {
    all |= x.key;
    any |= ~x.key;
  }
  std::vector<Boundary> tmp(b.size());
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < 64; shift += kBits) {
    // A digit that is the same everywhere (all ones or all zeros in every key) sorts nothing.
    std::uint64_t mask = (kBuckets - 1) << shift;
    if ((all & mask) == 0 || (any & mask) == 0) continue;
    std::fill(count.begin(), count.end(), 0);
    for (const auto& x : b) ++count[(x.key >> shift) & (kBuckets - 1)];
    std::size_t sum = 0;
    for (auto& c : count) {
      std::size_t n = c;
      c = sum;
      sum += n;
    }
    for (const auto& x : b) tmp[count[(x.key >> shift) & (kBuckets - 1)]++] = x;
    b.swap(tmp);
  }
}

template <class Interval>
void check(const Interval& i, const char* what) {
  if (i.end < i.start)
    throw std::invalid_argument(std::string(what) + " interval ends before it starts (" +
                                std::to_string(i.start) + " > " + std::to_string(i.end) + ")");
}

}  // namespace

OverlapResult computeOverlap(std::span<const CategoryInterval> categories,
                             std::span<const OperationSpan> operations) {
  constexpr std::uint64_t kMaxIndex = (std::uint64_t{1} << 32) - 1;
  TimeNs origin = 0, last = 0;
  bool found = false;
  std::size_t boundaries = 0;
  auto extend = [&](TimeNs start, TimeNs end) {
    if (end == start) return;
    if (!found || start < origin) origin = start;
    if (!found || end > last) last = end;
    found = true;
    boundaries += 2;
  };
  for (const auto& c : categories) {
    check(c, "category");
    extend(c.start, c.end);
  }
  for (const auto& o : operations) {
    check(o, "operation");
    extend(o.start, o.end);
  }
  OverlapResult r;
  if (!found) return r;
  if (static_cast<std::uint64_t>(last - origin) >= (std::uint64_t{1} << 62))
    throw std::invalid_argument("intervals span more than 2^62 ns");
  r.boundaries = boundaries;
  r.start = origin;  // the earliest start: ends come after their starts
  r.end = last;

  // The boundaries are sorted and swept a chunk of time at a time, each chunk holding about
  // kChunkBoundaries: all of them at once (16 bytes each, twice over for the sort, two per
  // interval) would take several times the memory of the intervals themselves. A chunk lists its
  // boundaries in the same relative order as the whole list would, so the stable sort puts
  // every boundary where one sort of all of them would have.
  constexpr std::size_t kChunkBoundaries = std::size_t{1} << 22;  // 64 MiB, twice over
  auto since = [&](TimeNs t) { return static_cast<std::uint64_t>(t - origin); };
  std::vector<std::uint64_t> chunkEnds;  // exclusive ends, in time since origin
  std::size_t largestChunk = boundaries;
  if (boundaries <= kChunkBoundaries) {
    chunkEnds.push_back(since(last) + 1);
  } else {
    largestChunk = 0;
    // Chunk limits from a histogram of the boundaries over kSlots equal slices of time.
    constexpr std::size_t kSlots = 4096;
    int shift = 0;
    while ((since(last) >> shift) >= kSlots) ++shift;
    std::vector<std::size_t> slots(kSlots);
    auto count = [&](TimeNs start, TimeNs end) {
      if (end == start) return;
      ++slots[since(start) >> shift];
      ++slots[since(end) >> shift];
    };
    for (const auto& c : categories) count(c.start, c.end);
    for (const auto& o : operations) count(o.start, o.end);
    std::size_t inChunk = 0;
    for (std::size_t i = 0; i < kSlots; ++i) {
      inChunk += slots[i];
      if (inChunk >= kChunkBoundaries || i + 1 == kSlots) {
        chunkEnds.push_back(static_cast<std::uint64_t>(i + 1) << shift);
        largestChunk = std::max(largestChunk, inChunk);
        inChunk = 0;
      }
    }
  }

  ActiveCategories active;
  ActiveOperations ops;
  SetTable sets;
  std::uint32_t set = 0;
  bool setChanged = false;  // the set's id is looked up when time next passes, not per boundary
  OwnerTimes time;
  TimeNs previous = r.start;
  std::size_t activeCount = 0;
  std::vector<Boundary> b;
  b.reserve(largestChunk);
  std::uint64_t chunkStart = 0;
  for (std::uint64_t chunkEnd : chunkEnds) {
    // This chunk's boundaries. Keys: the time since the first boundary, then the kind (ends
    // sort before starts).
    b.clear();
    auto add = [&](TimeNs t, Kind kind, std::uint64_t what) {
      std::uint64_t s = since(t);
      if (s >= chunkStart && s < chunkEnd) b.push_back({(s << 2) | (kind >> 1), what});
    };
    for (const auto& c : categories) {
      if (c.end == c.start) continue;
      add(c.start, kCategoryStart, pack(kCategoryStart, c.category));
      add(c.end, kCategoryEnd, pack(kCategoryEnd, c.category));
    }
    std::uint64_t serial = 0;
    for (const auto& o : operations) {
      if (o.end == o.start) continue;
      // The serial identifies the operation in the active stack; listed later and starting
      // together means inside (the stable sort keeps the listing order).
      add(o.start, kOperationStart, pack(kOperationStart, o.operation, serial));
      add(o.end, kOperationEnd, pack(kOperationEnd, o.operation, serial));
      ++serial;
    }
    chunkStart = chunkEnd;
    static_assert(kMaxIndex < (std::uint64_t{1} << 32));
    sortByKey(b);

    for (const Boundary& x : b) {
      TimeNs now = origin + static_cast<TimeNs>(x.key >> 2);
      if (now > previous) {
        if (setChanged) {
          set = sets.idOf(active);
          setChanged = false;
        }
        std::uint32_t owner = ops.owner();
        if (owner != kUnannotated || activeCount > 0) {
          time.add(owner, set, now - previous);
        }
        previous = now;
      }
      auto index = static_cast<std::uint32_t>((x.what >> 2) & kMaxIndex);
      switch (x.what & 3) {
        case kCategoryStart:
          active.add(index);
          ++activeCount;
          break;
        case kCategoryEnd:
          active.remove(index);
          --activeCount;
          break;
        case kOperationStart:
          ops.start(x.what >> 34, index);
          continue;
        case kOperationEnd:
          ops.end(x.what >> 34);
          continue;
      }
      setChanged = true;
    }
  }

  r.sets = sets.release();
  r.cells = time.cells();
  return r;
}

}  // namespace rlscope::analysis
