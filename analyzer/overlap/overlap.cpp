#include "rlscope/overlap/overlap.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>

namespace rlscope::analysis {

namespace {

constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();  // later than any start

// The starts a sweep takes: [from, to). A slice of a parallel sweep takes those of its slice.
struct Window {
  TimeNs from = std::numeric_limits<TimeNs>::min();
  TimeNs to = kNever;
  bool holds(TimeNs start) const { return start >= from && start < to; }
};

template <class Interval>
bool isEmpty(const Interval& i) {
  return i.end == i.start;
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

// Stable LSD radix sort on keyOf(record), 11 bits a pass, skipping passes whose digit is the same
// in every key (the high bits of times within a chunk, of operation indices): a few linear passes
// instead of a comparison sort of millions of records. `scratch` is the second buffer the passes
// alternate with, kept by the caller so that repeated sorts reuse its pages.
template <class Record, class KeyOf>
void sortByKey(std::vector<Record>& records, std::vector<Record>& scratch, KeyOf keyOf) {
  constexpr int kBits = 11;  // 2048 buckets: the counts and write heads stay in cache
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::uint64_t ones = 0, zeros = 0;  // the bits set in some key, and those clear in some key
  for (const Record& r : records) {
    ones |= keyOf(r);
    zeros |= ~keyOf(r);
  }
  scratch.resize(records.size());
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < 64; shift += kBits) {
    // A digit that is the same everywhere (all ones or all zeros in every key) sorts nothing.
    std::uint64_t mask = (kBuckets - 1) << shift;
    if ((ones & mask) == 0 || (zeros & mask) == 0) continue;
    std::fill(count.begin(), count.end(), 0);
    for (const Record& r : records) ++count[(keyOf(r) >> shift) & (kBuckets - 1)];
    std::size_t sum = 0;
    for (auto& c : count) {
      std::size_t n = c;
      c = sum;
      sum += n;
    }
    for (const Record& r : records) scratch[count[(keyOf(r) >> shift) & (kBuckets - 1)]++] = r;
    records.swap(scratch);
  }
}

// Sorts cells by operation then set and combines equal ones. A trace's millions of operation
// instances give millions of cells, which a comparison sort took a tenth of the engine's time to
// order.
void sortCells(std::vector<OverlapResult::Cell>& cells) {
  auto key = [](const OverlapResult::Cell& c) {
    return (std::uint64_t{c.operation} << 32) | c.set;
  };
  auto before = [&](const auto& x, const auto& y) { return key(x) < key(y); };
  if (!std::is_sorted(cells.begin(), cells.end(), before)) {
    std::vector<OverlapResult::Cell> scratch;
    sortByKey(cells, scratch, key);
  }
  // Equal cells are adjacent now: combined in place.
  std::size_t n = 0;
  for (const auto& c : cells) {
    if (n > 0 && cells[n - 1].operation == c.operation && cells[n - 1].set == c.set)
      cells[n - 1].time += c.time;
    else
      cells[n++] = c;
  }
  cells.resize(n);
  cells.shrink_to_fit();
}

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
    sortCells(cells_);
    return std::move(cells_);
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
  // Returns the ticket that ends this instance.
  std::uint64_t start(std::uint32_t operation) {
    std::uint64_t ticket = ended_.size();
    ended_.push_back(false);
    stack_.push_back({ticket, operation});
    return ticket;
  }
  void end(std::uint64_t ticket) {
    ended_[ticket] = true;
    while (!stack_.empty() && ended_[stack_.back().ticket]) stack_.pop_back();
  }
  std::uint32_t owner() const { return stack_.empty() ? kUnannotated : stack_.back().operation; }

 private:
  struct Entry {
    std::uint64_t ticket;
    std::uint32_t operation;
  };
  std::vector<Entry> stack_;
  std::vector<bool> ended_;
};

// The non-empty intervals of one array in start order, and in listing order among equal starts
// (the operations' nesting rule), a batch at a time. A trace lists its intervals mostly in start
// order already: in storage order, a thread's or a stream's rows come in runs in start order,
// the runs of a few threads interleaved. So an array in order is its own batch, one made of runs
// of which few are open at once is merged, and only the others are sorted, a chunk of time at a
// time so that the memory stays bounded.
template <class Interval>
class StartOrder {
 public:
  // `chunk`: at most this many intervals are sorted at a time (where sorting is needed). Only
  // the intervals that start in `window` come out.
  StartOrder(std::span<const Interval> in, TimeNs origin, TimeNs last, std::size_t chunk,
             Window window)
      : in_(in), origin_(origin), window_(window) {
    // A merge holds 24 bytes a run: up to twice `chunk` runs, it holds no more than the sort.
    std::size_t most = std::max<std::size_t>(1, std::min(2 * chunk, in_.size() / kMinRunLength));
    std::optional<std::vector<Run>> runs = mergeableRuns(most, last - origin);
    if (runs && runs->size() <= 1) {
      batch_ = in_;
      next_ = inWindowFrom(0, in_.size());
    } else if (runs) {
      // Each run from its first start in the window: a linear skip, cheap beside the merge.
      for (Run& r : *runs)
        if ((r.at = inWindowFrom(r.at, r.end)) < r.end) r.start = in_[r.at].start;
      std::erase_if(*runs, [](const Run& r) { return r.at == r.end; });
      runs_ = std::move(*runs);
      std::make_heap(runs_.begin(), runs_.end(), later);
      buffer_.reserve(kMergeBatch);
    } else {
      planChunks(last, chunk);
    }
    skipEmpty();
  }

  // The start of the next interval; kNever after the last one in the window. Starts come in
  // order, so the first at or past the window's end ends it.
  TimeNs nextStart() const {
    return next_ < batch_.size() && batch_[next_].start < window_.to ? batch_[next_].start : kNever;
  }
  const Interval& front() const { return batch_[next_]; }
  void pop() {
    ++next_;
    skipEmpty();
  }

 private:
  // Merging costs a heap descent per interval, as deep as the runs open at once: past about this
  // many finely interleaved runs, sorting was as fast (measured), though merging holds no buffers.
  static constexpr double kMaxOpenRuns = 64;
  // Each run also costs a descent through all the runs when it ends: runs of single intervals
  // (starts in decreasing order) would make the merge a heap sort.
  static constexpr std::size_t kMinRunLength = 2;
  static constexpr std::size_t kMergeBatch = 4096;

  // A run of non-decreasing starts, for the k-way merge: a min-heap of the runs' next intervals,
  // by start then position (a run listed earlier goes first among equal starts).
  struct Run {
    TimeNs start;         // of its next interval
    std::size_t at, end;  // its next interval, and its end
  };
  static bool later(const Run& x, const Run& y) {
    return x.start != y.start ? x.start > y.start : x.at > y.at;
  }

  // The runs, if merging them is worth it: at most `most`, on average at most kMaxOpenRuns open
  // at once (the runs' spans of starts summed, over `time`). Empty intervals break no run: they
  // are skipped anyway. Gives up as soon as merging is not worth it, so that an array in random
  // order costs a short look only.
  std::optional<std::vector<Run>> mergeableRuns(std::size_t most, TimeNs time) const {
    std::vector<Run> runs;
    std::size_t first = nonEmptyFrom(0, in_.size());
    if (first == in_.size()) return runs;
    runs.push_back({in_[first].start, first, in_.size()});
    TimeNs previous = in_[first].start;
    double open = 0;
    auto close = [&] {  // the last run ends after `previous`
      open += static_cast<double>(previous - runs.back().start) / static_cast<double>(time);
      return open <= kMaxOpenRuns;
    };
    for (std::size_t i = first; i < in_.size(); ++i) {
      if (isEmpty(in_[i])) continue;
      if (in_[i].start < previous) {
        runs.back().end = i;
        if (!close() || runs.size() == most) return std::nullopt;
        runs.push_back({in_[i].start, i, in_.size()});
      }
      previous = in_[i].start;
    }
    if (!close()) return std::nullopt;
    return runs;
  }

  // Moves past empty intervals, to the next batch when this one is used up.
  void skipEmpty() {
    for (;;) {
      while (next_ < batch_.size() && isEmpty(batch_[next_])) ++next_;
      if (next_ < batch_.size() || !refill()) return;
    }
  }

  // The next batch; false when there is none.
  bool refill() {
    if (!runs_.empty()) {
      mergeBatch();
    } else if (chunk_ < chunkEnds_.size()) {
      sortChunk();
    } else {
      return false;
    }
    batch_ = buffer_;
    next_ = 0;
    return true;
  }

  // The first non-empty interval in [at, end), else end: an empty one's start may be out of
  // order, and must not place its run in the heap.
  std::size_t nonEmptyFrom(std::size_t at, std::size_t end) const {
    while (at < end && isEmpty(in_[at])) ++at;
    return at;
  }

  // In a run in start order: the first non-empty interval in [at, end) that starts at or after
  // the window's start, else end.
  std::size_t inWindowFrom(std::size_t at, std::size_t end) const {
    while (at < end && (isEmpty(in_[at]) || in_[at].start < window_.from)) ++at;
    return at;
  }

  void mergeBatch() {
    buffer_.clear();
    while (buffer_.size() < kMergeBatch && !runs_.empty()) {
      Run& r = runs_.front();
      buffer_.push_back(in_[r.at]);
      r.at = nonEmptyFrom(r.at + 1, r.end);
      if (r.at == r.end) {
        std::pop_heap(runs_.begin(), runs_.end(), later);
        runs_.pop_back();
      } else {
        r.start = in_[r.at].start;
        sinkTop();
      }
    }
  }

  // Restores the heap after the top run moved on. A run usually stays on top for a while (a
  // thread's buffer, a burst of kernels): one or two comparisons then, where popping and pushing
  // would go through the whole heap.
  void sinkTop() {
    Run top = runs_.front();
    std::size_t i = 0;
    for (std::size_t child = 1; child < runs_.size(); child = 2 * i + 1) {
      if (child + 1 < runs_.size() && later(runs_[child], runs_[child + 1])) ++child;
      if (!later(top, runs_[child])) break;
      runs_[i] = runs_[child];
      i = child;
    }
    runs_[i] = top;
  }

  std::uint64_t since(TimeNs t) const { return static_cast<std::uint64_t>(t - origin_); }

  // Chunks of time holding at most `chunk` starts each (or one slot's, where a single slot holds
  // more), from a histogram of the starts over kSlots equal slices of time.
  void planChunks(TimeNs last, std::size_t chunk) {
    constexpr std::size_t kSlots = 4096;
    int shift = 0;
    while ((since(last) >> shift) >= kSlots) ++shift;
    std::vector<std::size_t> slots(kSlots);
    for (const Interval& i : in_)
      if (!isEmpty(i) && window_.holds(i.start)) ++slots[since(i.start) >> shift];
    std::size_t inChunk = 0, largest = 0;
    for (std::size_t s = 0; s < kSlots; ++s) {
      if (inChunk > 0 && inChunk + slots[s] > chunk) {
        chunkEnds_.push_back(static_cast<std::uint64_t>(s) << shift);
        largest = std::max(largest, inChunk);
        inChunk = 0;
      }
      inChunk += slots[s];
    }
    chunkEnds_.push_back(since(last) + 1);
    buffer_.reserve(std::max(largest, inChunk));
  }

  // The next chunk's intervals in the input's order, then sorted by start: stably, so that
  // operations starting together keep their listing order.
  void sortChunk() {
    std::uint64_t from = chunk_ > 0 ? chunkEnds_[chunk_ - 1] : 0, to = chunkEnds_[chunk_];
    ++chunk_;
    buffer_.clear();
    for (const Interval& i : in_)
      if (!isEmpty(i) && window_.holds(i.start) && since(i.start) >= from && since(i.start) < to)
        buffer_.push_back(i);
    sortByKey(buffer_, scratch_, [&](const Interval& i) { return since(i.start); });
  }

  std::span<const Interval> in_;
  TimeNs origin_;
  Window window_;
  std::span<const Interval> batch_;  // the input itself, or buffer_
  std::size_t next_ = 0;
  std::vector<Interval> buffer_, scratch_;
  std::vector<Run> runs_;                 // the merge's heap
  std::vector<std::uint64_t> chunkEnds_;  // exclusive, in time since origin
  std::size_t chunk_ = 0;
};

// One sweep over the boundaries in time order. Starts come from the callers' arrays in start
// order; the ends of the intervals started wait in a min-heap, as many as are open at once, so
// that ends, which a trace does not hold in order, are never sorted. Boundaries at one instant may
// go in any order but for operation starts (listing order: inner operations last), since time
// passes only between instants.
class Sweep {
 public:
  explicit Sweep(TimeNs first) : previous_(first) {}

  void start(const CategoryInterval& c) {
    endUpTo(c.start);
    passTo(c.start);
    active_.add(c.category);
    ++activeCount_;
    setChanged_ = true;
    ends_.push({c.end, std::uint64_t{c.category} << 1});
  }

  void start(const OperationSpan& o) {
    endUpTo(o.start);
    passTo(o.start);
    ends_.push({o.end, (ops_.start(o.operation) << 1) | 1});
  }

  // Ends what is still open, or (a slice's sweep) what ends by `stop`, giving the time up to `stop`
  // to what is open then; hands out the sets and cells.
  void finish(OverlapResult& r, TimeNs stop = kNever) {
    endUpTo(stop);
    if (stop != kNever) passTo(stop);
    r.sets = sets_.release();
    r.cells = time_.cells();
  }

 private:
  struct End {
    TimeNs time;
    std::uint64_t what;  // a category << 1, or an operation's ticket << 1 | 1
  };
  struct Later {
    bool operator()(const End& x, const End& y) const { return x.time > y.time; }
  };

  void endUpTo(TimeNs t) {
    while (!ends_.empty() && ends_.top().time <= t) {
      End e = ends_.top();
      ends_.pop();
      passTo(e.time);
      if (e.what & 1) {
        ops_.end(e.what >> 1);
      } else {
        active_.remove(static_cast<std::uint32_t>(e.what >> 1));
        --activeCount_;
        setChanged_ = true;
      }
    }
  }

  // Gives the time since the previous boundary to the owner and the set active then.
  void passTo(TimeNs now) {
    if (now <= previous_) return;
    if (setChanged_) {  // looked up when time passes, not per boundary
      set_ = sets_.idOf(active_);
      setChanged_ = false;
    }
    std::uint32_t owner = ops_.owner();
    if (owner != kUnannotated || activeCount_ > 0) time_.add(owner, set_, now - previous_);
    previous_ = now;
  }

  ActiveCategories active_;
  ActiveOperations ops_;
  SetTable sets_;
  OwnerTimes time_;
  std::priority_queue<End, std::vector<End>, Later> ends_;
  std::uint32_t set_ = 0;
  bool setChanged_ = false;
  TimeNs previous_;
  std::size_t activeCount_ = 0;
};

template <class Interval>
void check(const Interval& i, const char* what) {
  if (i.end < i.start)
    throw std::invalid_argument(std::string(what) + " interval ends before it starts (" +
                                std::to_string(i.start) + " > " + std::to_string(i.end) + ")");
}

// The first and last boundary, and how many non-empty intervals each array has.
struct Extent {
  TimeNs first = 0, last = 0;
  std::size_t categories = 0, operations = 0;
};

Extent extentOf(std::span<const CategoryInterval> categories,
                std::span<const OperationSpan> operations) {
  Extent e;
  auto extend = [&](TimeNs start, TimeNs end) {
    if (e.categories + e.operations == 0 || start < e.first) e.first = start;
    if (e.categories + e.operations == 0 || end > e.last) e.last = end;
  };
  for (const auto& c : categories) {
    check(c, "category");
    if (isEmpty(c)) continue;
    extend(c.start, c.end);
    ++e.categories;
  }
  for (const auto& o : operations) {
    check(o, "operation");
    if (isEmpty(o)) continue;
    extend(o.start, o.end);
    ++e.operations;
  }
  return e;
}

// Where an array must be sorted, it is a chunk of time at a time: all of it at once (twice over
// for the sort) would take several times the memory of the intervals themselves. The two arrays
// share kChunk in proportion to their sizes, so that both sorting at once hold no more; the slices
// of a parallel sweep share it too.
constexpr std::size_t kChunk = std::size_t{1} << 21;  // 24 bytes each: 48 MiB, twice over

// Feeds the sweep every non-empty interval that starts in `window`, in start order. The orders'
// buffers are gone when this returns, before the cells are sorted.
void sweepInStartOrder(Sweep& sweep, std::span<const CategoryInterval> categories,
                       std::span<const OperationSpan> operations, const Extent& e,
                       Window window = {}, std::size_t chunk = kChunk) {
  std::size_t intervals = e.categories + e.operations;
  auto share = [&](std::size_t n) { return std::max<std::size_t>(1, chunk * n / intervals); };
  StartOrder<CategoryInterval> categoryStarts(categories, e.first, e.last, share(e.categories),
                                              window);
  StartOrder<OperationSpan> operationStarts(operations, e.first, e.last, share(e.operations),
                                            window);

  for (;;) {
    TimeNs c = categoryStarts.nextStart(), o = operationStarts.nextStart();
    if (c == kNever && o == kNever) break;
    if (c <= o) {
      sweep.start(categoryStarts.front());
      categoryStarts.pop();
    } else {
      sweep.start(operationStarts.front());
      operationStarts.pop();
    }
  }
}

// --- A sweep in slices of time, at once ---------------------------------------------------------

unsigned partsFor(const OverlapOptions& options, std::size_t intervals) {
  if (intervals <= options.parallelAbove) return 1;
  unsigned parts = options.parts ? options.parts : std::thread::hardware_concurrency();
  return std::clamp(parts, 1u, OverlapOptions::kMaxParts);
}

// Up to parts - 1 cuts, increasing, inside (first, last): quantiles of a sample of the starts, so
// that the slices hold about as many starts each.
template <class Interval>
void sampleStarts(std::span<const Interval> in, std::size_t count, std::vector<TimeNs>& out) {
  if (in.empty() || count == 0) return;
  std::size_t step = std::max<std::size_t>(1, in.size() / count);
  for (std::size_t i = 0; i < in.size(); i += step)
    if (!isEmpty(in[i])) out.push_back(in[i].start);
}

std::vector<TimeNs> cutsFor(std::span<const CategoryInterval> categories,
                            std::span<const OperationSpan> operations, const Extent& e,
                            unsigned parts) {
  constexpr std::size_t kSample = 4096;
  std::size_t intervals = e.categories + e.operations;
  std::vector<TimeNs> starts;
  sampleStarts(categories, kSample * e.categories / intervals, starts);
  sampleStarts(operations, kSample * e.operations / intervals, starts);
  std::sort(starts.begin(), starts.end());
  std::vector<TimeNs> cuts;
  for (unsigned k = 1; k < parts && !starts.empty(); ++k) {
    TimeNs cut = starts[starts.size() * k / parts];
    if (cut > e.first && cut < e.last && (cuts.empty() || cut > cuts.back())) cuts.push_back(cut);
  }
  return cuts;
}

// One slice, [from, to): what was open at `from` (started before, ending after) starts the
// sweep, cut to start at `from`, operations in the order they started (and were listed among
// equal starts), so that the one started last still owns the time; then the slice's own starts.
OverlapResult sweepSlice(std::span<const CategoryInterval> categories,
                         std::span<const OperationSpan> operations, const Extent& e, Window window,
                         std::size_t chunk) {
  Sweep sweep(window.from == std::numeric_limits<TimeNs>::min() ? e.first : window.from);
  if (window.from != std::numeric_limits<TimeNs>::min()) {
    auto open = [&](const auto& i) { return i.start < window.from && i.end > window.from; };
    for (const auto& c : categories)
      if (open(c)) sweep.start(CategoryInterval{window.from, c.end, c.category});
    std::vector<OperationSpan> carried;
    for (const auto& o : operations)
      if (open(o)) carried.push_back(o);
    std::stable_sort(carried.begin(), carried.end(),
                     [](const auto& x, const auto& y) { return x.start < y.start; });
    for (const auto& o : carried) sweep.start(OperationSpan{window.from, o.end, o.operation});
  }
  sweepInStartOrder(sweep, categories, operations, e, window, chunk);
  OverlapResult r;
  sweep.finish(r, window.to);
  return r;
}

// The slices' results, in time order, as one sweep's: sets numbered in the order they first
// received time (the earlier slice's first), each (operation, set) cell once, summed, sorted.
OverlapResult joinSlices(std::vector<OverlapResult>& slices) {
  OverlapResult into = std::move(slices.front());
  std::map<std::vector<std::uint32_t>, std::uint32_t> ids;
  for (std::uint32_t id = 0; id < into.sets.size(); ++id) ids.emplace(into.sets[id], id);
  for (auto& slice : std::span(slices).subspan(1)) {
    std::vector<std::uint32_t> idOf(slice.sets.size());
    for (std::size_t id = 0; id < slice.sets.size(); ++id) {
      auto [it, added] = ids.emplace(slice.sets[id], static_cast<std::uint32_t>(into.sets.size()));
      if (added) into.sets.push_back(std::move(slice.sets[id]));
      idOf[id] = it->second;
    }
    for (auto c : slice.cells) {
      c.set = idOf[c.set];
      into.cells.push_back(c);
    }
  }
  sortCells(into.cells);
  return into;
}

// Runs each task on a thread of its own but the first, which runs on this one; a task without a
// thread to be had runs here too. Exceptions reach the caller, the first slice's first.
void runAtOnce(std::vector<std::function<void()>>& tasks) {
  std::vector<std::future<void>> others;
  for (std::size_t k = 1; k < tasks.size(); ++k) {
    try {
      others.push_back(std::async(std::launch::async, tasks[k]));
    } catch (const std::system_error&) {
      others.push_back(std::async(std::launch::deferred, tasks[k]));
    }
  }
  std::exception_ptr error;
  try {
    tasks[0]();
  } catch (...) {
    error = std::current_exception();
  }
  for (auto& f : others) {
    try {
      f.get();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace

OverlapResult computeOverlap(std::span<const CategoryInterval> categories,
                             std::span<const OperationSpan> operations,
                             const OverlapOptions& options) {
  Extent e = extentOf(categories, operations);
  OverlapResult r;
  std::size_t intervals = e.categories + e.operations;
  if (intervals == 0) return r;
  if (static_cast<std::uint64_t>(e.last - e.first) >= (std::uint64_t{1} << 62))
    throw std::invalid_argument("intervals span more than 2^62 ns");

  std::vector<TimeNs> cuts;
  if (unsigned parts = partsFor(options, intervals); parts > 1)
    cuts = cutsFor(categories, operations, e, parts);
  if (cuts.empty()) {
    Sweep sweep(e.first);
    sweepInStartOrder(sweep, categories, operations, e);
    sweep.finish(r);
  } else {
    std::vector<OverlapResult> slices(cuts.size() + 1);
    std::vector<std::function<void()>> tasks;
    std::size_t chunk = std::max<std::size_t>(1, kChunk / slices.size());
    for (std::size_t k = 0; k < slices.size(); ++k) {
      Window window{.from = k ? cuts[k - 1] : std::numeric_limits<TimeNs>::min(),
                    .to = k < cuts.size() ? cuts[k] : kNever};
      tasks.emplace_back([&, k, window, chunk] {
        slices[k] = sweepSlice(categories, operations, e, window, chunk);
      });
    }
    runAtOnce(tasks);
    r = joinSlices(slices);
  }
  r.boundaries = 2 * intervals;
  r.start = e.first;  // the earliest start: ends come after their starts
  r.end = e.last;
  return r;
}

}  // namespace rlscope::analysis
