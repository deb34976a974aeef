// The merge of the Python tracker's category stacks: flat rows per thread, and the tracker's
// event counts carried by each push and pop landing on the row they ended, with the process's
// total in the trace's meta.
#include <gtest/gtest.h>

#include <string>

#include "part_builder.h"
#include "rlscope/merge/part_merger.h"
#include "rlscope/part/format.h"
#include "rlscope/trace/sqlite.h"
#include "support/temp_dir.h"

namespace rlscope {
namespace {

using part::RecordType;

TEST(MergeCategories, PythonEventsLandOnTheRowsTheyHappenedIn) {
  testing::TempDir tmp;
  const std::uint32_t pid = 4343, tid = 4343;
  PartBuilder b;
  b.add(0, RecordType::kProcessInfo, part::ProcessInfo{1000, pid, 1, 7, 0}, {"/bin/py", "py"});
  b.add(tid, RecordType::kThreadStart, part::ThreadStart{1000, tid, 0});
  auto push = [&](std::int64_t t, std::uint32_t category, std::uint64_t events) {
    b.add(tid, RecordType::kCategoryPush,
          part::CategoryPush{t, category, part::categoryPushFlags(false, events), 0});
  };
  auto pop = [&](std::int64_t t, std::uint64_t events) {
    b.add(tid, RecordType::kCategoryPopEvents, part::CategoryPopEvents{t, events});
  };
  push(2000, 1, 0);  // the thread's base: Python
  push(2100, 2, 7);  // 7 events in Python [2000, 2100), then a backend call
  push(2200, 1, 1);  // the call's Python callback: 1 event in Backend [2100, 2200)
  pop(2300, 40);     // 40 events in the callback
  pop(2400, 0);      // back in Python after the call
  push(2400, 3, 5);  // the empty Python span [2400, 2400)'s 5 events go to its next span
  pop(2500, 0);
  // A native wait inside Python: carries no events, counts no transition.
  b.add(tid, RecordType::kCategoryPush,
        part::CategoryPush{2600, 0, part::categoryPushFlags(true, 0), 0});
  b.add(tid, RecordType::kCategoryPop, part::Instant{2700});
  pop(2800, 3);
  b.add(0, RecordType::kPythonEvents, part::PythonEvents{60});
  b.add(0, RecordType::kProcessEnd, part::ProcessEnd{3000, 0, 0, {0, 0}});
  b.write(tmp.path(), pid);

  auto out = tmp / "t.sqlite";
  merge::MergeOptions o;
  o.features = part::kFeaturePython;
  merge::mergeParts(tmp.path(), out, o);

  trace::Database db(out, trace::Database::Mode::kReadOnlyUntrusted);
  auto text = [&](const std::string& sql) {
    auto st = db.prepare(sql);
    return st.step() ? st.columnAsText(0) : std::string("<none>");
  };
  EXPECT_EQ(text("SELECT group_concat(start || '-' || end || ':' || category || '=' || "
                 "COALESCE(pythonEvents, 0), ' ') FROM (SELECT * FROM rlscope_cpu_intervals "
                 "ORDER BY start)"),
            "2000-2100:1=7 2100-2200:2=1 2200-2300:1=40 2300-2400:2=0 2400-2500:3=0 "
            "2500-2600:1=5 2600-2700:9=0 2700-2800:1=3");
  EXPECT_EQ(text("SELECT value FROM rlscope_meta WHERE key = 'python_events'"), "60");
  EXPECT_EQ(text("SELECT value FROM rlscope_meta WHERE key = 'python_transitions'"), "8");
}

TEST(MergeCategories, EventCountsSaturateInThePushFlags) {
  EXPECT_EQ(part::categoryPushEvents(part::categoryPushFlags(false, 12345)), 12345u);
  EXPECT_EQ(part::categoryPushEvents(part::categoryPushFlags(true, 1ull << 40)),
            part::kCategoryPushMaxEvents);
  EXPECT_TRUE(part::categoryPushFlags(true, 1ull << 40) & part::kCategoryPushNativeWait);
  EXPECT_FALSE(part::categoryPushFlags(false, 3) & part::kCategoryPushNativeWait);
}

}  // namespace
}  // namespace rlscope
