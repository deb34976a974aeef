#include "rlscope/gui_model/track_item.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace rlscope::gui {

std::string_view sourceTable(ItemSource source) {
  switch (source) {
    case ItemSource::kOperation:
      return "rlscope_operations";
    case ItemSource::kCpuInterval:
      return "rlscope_cpu_intervals";
    case ItemSource::kRuntime:
      return "CUPTI_ACTIVITY_KIND_RUNTIME";
    case ItemSource::kDriver:
      return "CUPTI_ACTIVITY_KIND_DRIVER";
    case ItemSource::kKernel:
      return "CUPTI_ACTIVITY_KIND_KERNEL";
    case ItemSource::kMemcpy:
      return "CUPTI_ACTIVITY_KIND_MEMCPY";
    case ItemSource::kMemset:
      return "CUPTI_ACTIVITY_KIND_MEMSET";
  }
  return {};
}

std::optional<trace::Category> TrackItem::category() const {
  if (categoryId < 1 || categoryId > trace::kCategoryCount) return std::nullopt;
  return static_cast<trace::Category>(categoryId);
}

bool startsBefore(const TrackItem& a, const TrackItem& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  if (a.source != b.source) return a.source < b.source;
  return a.rowId < b.rowId;
}

bool isRow(std::span<const TrackItem> items) {
  for (std::size_t i = 1; i < items.size(); ++i)
    if (startsBefore(items[i], items[i - 1]) || items[i].start < items[i - 1].end) return false;
  return true;
}

namespace {

// The end of each row's last item, with the lowest row ended by a given time found in O(log rows):
// a tree of minima over ranges of rows (leaves: rows; rows not used yet hold "never").
class RowEnds {
 public:
  // The row of an item [start, end): the lowest whose last item has ended by `start`, or a new
  // one; it is then busy until `end`.
  std::size_t place(TimeNs start, TimeNs end) {
    std::size_t row = used_;
    if (!min_.empty() && min_[1] <= start) {
      std::size_t node = 1;
      while (node < leaves_) node = min_[2 * node] <= start ? 2 * node : 2 * node + 1;
      row = node - leaves_;
    }
    if (row == used_ && ++used_ > leaves_) grow();
    set(row, end);
    return row;
  }

 private:
  static constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

  void set(std::size_t row, TimeNs end) {
    std::size_t node = leaves_ + row;
    min_[node] = end;
    for (node /= 2; node >= 1; node /= 2) min_[node] = std::min(min_[2 * node], min_[2 * node + 1]);
  }
  void grow() {
    std::size_t leaves = std::max<std::size_t>(2 * leaves_, 2);
    std::vector<TimeNs> bigger(2 * leaves, kNever);
    std::copy(min_.begin() + static_cast<std::ptrdiff_t>(leaves_), min_.end(),
              bigger.begin() + static_cast<std::ptrdiff_t>(leaves));
    min_.swap(bigger);
    leaves_ = leaves;
    for (std::size_t node = leaves_ - 1; node >= 1; --node)
      min_[node] = std::min(min_[2 * node], min_[2 * node + 1]);
  }

  std::vector<TimeNs> min_;  // min_[1] is the root; the leaves start at min_[leaves_]
  std::size_t leaves_ = 0;
  std::size_t used_ = 0;
};

// Sorted items taken from pieces that follow one another: the chunks of a table, as a loader reads
// it, usually.
class Run {
 public:
  void append(std::span<const TrackItem> piece) { pieces_.push_back(piece); }
  bool done() const { return piece_ == pieces_.size(); }
  const TrackItem& front() const { return pieces_[piece_][item_]; }
  const TrackItem& back() const { return pieces_.back().back(); }
  void pop() {
    if (++item_ == pieces_[piece_].size()) {
      ++piece_;
      item_ = 0;
    }
  }

 private:
  std::vector<std::span<const TrackItem>> pieces_;
  std::size_t piece_ = 0, item_ = 0;
};

// Sorted, non-empty pieces chained into runs: a piece continues the run before it when it
// starts after that run's last item.
std::vector<Run> chainRuns(const std::vector<std::vector<TrackItem>>& pieces) {
  std::vector<Run> runs;
  for (const auto& piece : pieces) {
    if (runs.empty() || startsBefore(piece.front(), runs.back().back())) runs.emplace_back();
    runs.back().append(piece);
  }
  return runs;
}

// Calls fn with every item of the runs in startsBefore order: a merge, which costs a comparison
// per run and item. The runs are taken by value, so each call starts from their beginnings.
template <class Fn>
void forEachMerged(std::vector<Run> runs, Fn&& fn) {
  for (;;) {
    Run* first = nullptr;
    for (Run& run : runs)
      if (!run.done() && (!first || startsBefore(run.front(), first->front()))) first = &run;
    if (!first) return;
    fn(first->front());
    first->pop();
  }
}

}  // namespace

std::vector<std::vector<TrackItem>> splitIntoRows(std::vector<std::vector<TrackItem>> pieces) {
  std::erase_if(pieces, [](const auto& piece) { return piece.empty(); });
  for (auto& piece : pieces)
    if (!std::is_sorted(piece.begin(), piece.end(), startsBefore))
      std::sort(piece.begin(), piece.end(), startsBefore);
  std::vector<std::vector<TrackItem>> rows;
  if (pieces.size() == 1 && isRow(pieces.front())) {  // one row already: no copy
    rows.push_back(std::move(pieces.front()));
    return rows;
  }
  auto runs = chainRuns(pieces);
  // Pieces out of order with one another make many runs, each costing a comparison per item in
  // the merge: past a few, sorting everything at once is cheaper.
  constexpr std::size_t kMostRuns = 8;
  if (runs.size() > kMostRuns) {
    std::vector<TrackItem> all;
    for (auto& piece : pieces) {
      all.insert(all.end(), piece.begin(), piece.end());
      std::vector<TrackItem>().swap(piece);
    }
    std::sort(all.begin(), all.end(), startsBefore);
    pieces.clear();
    pieces.push_back(std::move(all));
    runs = chainRuns(pieces);
  }
  // The merge runs twice instead of being stored: first to size the rows, then to fill them.
  std::vector<std::size_t> sizes;
  RowEnds counting;
  forEachMerged(runs, [&](const TrackItem& item) {
    std::size_t row = counting.place(item.start, item.end);
    if (row == sizes.size()) sizes.push_back(0);
    ++sizes[row];
  });
  rows.resize(sizes.size());
  for (std::size_t r = 0; r < rows.size(); ++r) rows[r].reserve(sizes[r]);
  RowEnds filling;
  forEachMerged(runs, [&](const TrackItem& item) {
    rows[filling.place(item.start, item.end)].push_back(item);
  });
  return rows;
}

std::vector<std::vector<TrackItem>> splitIntoRows(std::vector<TrackItem> items) {
  std::vector<std::vector<TrackItem>> pieces;
  pieces.push_back(std::move(items));
  return splitIntoRows(std::move(pieces));
}

}  // namespace rlscope::gui
