#include <gtest/gtest.h>

#include "rlscope/trace/reader.h"
#include "rlscope/trace/writer.h"
#include "support/temp_dir.h"

namespace rlscope::trace {
namespace {

TEST(WriterReader, RoundTripsCpuIntervalsInStartOrder) {
  testing::TempDir dir;
  auto path = dir / "t.sqlite";
  {
    TraceWriter w(path);
    auto name = w.intern("aten::mm");
    w.addCpuInterval(
        {.start = 30, .end = 40, .globalTid = 7, .category = Category::kBackend, .nameId = name});
    w.addCpuInterval(
        {.start = 10, .end = 20, .globalTid = 7, .category = Category::kPython, .nameId = name});
    w.commit();
  }
  TraceReader r(path);
  std::vector<TimeNs> starts;
  r.forEachCpuInterval({}, [&](const CpuIntervalRecord& c) { starts.push_back(c.start); });
  EXPECT_EQ(starts, (std::vector<TimeNs>{10, 30}));
  EXPECT_EQ(r.string(1), "aten::mm");
}

TEST(WriterReader, StorageOrderVisitsRowsAsInserted) {
  testing::TempDir dir;
  auto path = dir / "t.sqlite";
  {
    TraceWriter w(path);
    for (TimeNs start : {30, 10, 20}) w.addPhase({start, start + 1, 0, w.intern("p")});
    w.commit();
  }
  TraceReader r(path);
  std::vector<TimeNs> starts;
  r.forEachPhase({.storageOrder = true}, [&](const PhaseRecord& p) { starts.push_back(p.start); });
  EXPECT_EQ(starts, (std::vector<TimeNs>{30, 10, 20}));
}

}  // namespace
}  // namespace rlscope::trace
