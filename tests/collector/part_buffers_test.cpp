// The collector's buffers and part files: what a thread writes arrives whole and in order, and a
// part cut short anywhere reads back as far as it is whole.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "part_file.h"
#include "rlscope/part/reader.h"
#include "rlscope/part/record_codec.h"
#include "support/temp_dir.h"
#include "thread_buffer.h"

namespace rlscope {
namespace {

using collector::PartFile;
using collector::ThreadBuffer;
using part::RecordType;

void write(ThreadBuffer& b, RecordType type, std::int64_t t, std::string_view s) {
  std::size_t n = part::encodedSize<part::Instant>({s});
  part::encodeRecord(b.reserve(n), type, part::Instant{t}, {s});
  b.publish(n);
}

part::FileHeader header(std::uint32_t pid) {
  part::FileHeader h{};
  std::memcpy(h.magic, part::kFileMagic, sizeof h.magic);
  h.version = part::kFormatVersion;
  h.pid = pid;
  return h;
}

TEST(ThreadBuffer, ConcurrentDrainSeesEveryRecordWholeAndInOrder) {
  ThreadBuffer b(42);
  constexpr int kRecords = 200000;
  std::atomic<bool> done{false};
  std::thread producer([&] {
    for (int i = 0; i < kRecords; ++i) {
      // Every 1000th record is bigger than a chunk, as a very long name would be.
      std::string name = i % 1000 == 999 ? std::string(ThreadBuffer::kChunkBytes + 10, 'n')
                                         : "op" + std::to_string(i);
      write(b, RecordType::kRangePushA, i, name);
    }
    b.finish();
    done = true;
  });
  std::vector<std::byte> out;
  bool empty = false;
  while (!empty) {
    empty = b.drain([&](const std::byte* d, std::size_t n) { out.insert(out.end(), d, d + n); });
    if (!empty) std::this_thread::yield();
  }
  producer.join();
  // Decode what was drained.
  std::size_t at = 0;
  int i = 0;
  while (at < out.size()) {
    part::RecordHeader h;
    std::memcpy(&h, out.data() + at, sizeof h);
    part::RecordView v{static_cast<RecordType>(h.type),
                       std::span<const std::byte>(out.data() + at + sizeof h, h.bytes - sizeof h)};
    ASSERT_EQ(v.payload<part::Instant>()->time, i);
    auto s = v.string<part::Instant>(0);
    ASSERT_TRUE(s);
    if (i % 1000 == 999)
      ASSERT_EQ(s->size(), ThreadBuffer::kChunkBytes + 10);
    else
      ASSERT_EQ(*s, "op" + std::to_string(i));
    at += h.bytes;
    ++i;
  }
  EXPECT_EQ(i, kRecords);
}

TEST(PartFile, RoundTripAndEveryTruncationReadsAWholePrefix) {
  testing::TempDir tmp;
  PartFile f;
  ASSERT_EQ(f.open(tmp.path().string(), header(1234)), "");
  ThreadBuffer b(7);
  for (int block = 0; block < 3; ++block) {
    for (int i = 0; i < 5; ++i) write(b, RecordType::kRangePushA, block * 10 + i, "name");
    b.drain([&](const std::byte* d, std::size_t n) { f.writeBlock(b.tid(), d, n); });
  }
  auto path = f.path();
  f.close();
  EXPECT_EQ(path.substr(path.rfind('/') + 1), "1234-0.part");

  part::PartReader whole(path);
  whole.readAll();
  EXPECT_EQ(whole.header().pid, 1234u);
  EXPECT_EQ(whole.blocksRead(), 3u);
  EXPECT_EQ(whole.cutShort(), "");
  int n = 0;
  whole.forEachRecord([&](std::uint32_t tid, const part::RecordView& r) {
    EXPECT_EQ(tid, 7u);
    EXPECT_EQ(r.type, RecordType::kRangePushA);
    ++n;
  });
  EXPECT_EQ(n, 15);

  // A second part of the same pid gets the next name, never overwriting the first.
  PartFile again;
  ASSERT_EQ(again.open(tmp.path().string(), header(1234)), "");
  EXPECT_NE(again.path(), path);

  std::string bytes = testing::readFile(path);
  const std::size_t blockBytes = (bytes.size() - sizeof(part::FileHeader)) / 3;
  for (std::size_t len = sizeof(part::FileHeader); len < bytes.size(); ++len) {
    auto cut = tmp.write("cut.part", bytes.substr(0, len));
    part::PartReader r(cut);
    r.readAll();
    int records = 0;
    r.forEachRecord([&](std::uint32_t, const part::RecordView&) { ++records; });
    std::size_t wholeBlocks = (len - sizeof(part::FileHeader)) / blockBytes;
    EXPECT_EQ(records, static_cast<int>(wholeBlocks) * 5) << "at " << len;
    bool onBoundary = (len - sizeof(part::FileHeader)) % blockBytes == 0;
    EXPECT_EQ(r.cutShort().empty(), onBoundary) << "at " << len << ": " << r.cutShort();
  }
}

TEST(PartFile, RejectsWhatIsNotAPart) {
  testing::TempDir tmp;
  EXPECT_THROW(part::PartReader(tmp / "missing.part"), std::runtime_error);
  EXPECT_THROW(part::PartReader(tmp.write("short.part", "RLSC")), std::runtime_error);
  EXPECT_THROW(part::PartReader(tmp.write("other.part", std::string(64, 'x'))), std::runtime_error);
  auto h = header(1);
  h.version = 99;
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
  try {
    part::PartReader r(tmp.write("new.part", bytes));
    ADD_FAILURE() << "version 99 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("version 99"), std::string::npos) << e.what();
  }
  // A damaged record inside a block: reading stops before that block.
  std::string good(reinterpret_cast<const char*>(&h), sizeof h);
  h.version = part::kFormatVersion;
  good.assign(reinterpret_cast<const char*>(&h), sizeof h);
  part::BlockHeader b{part::kBlockMagic, 1, 8, 0};
  part::RecordHeader bad{1, 0, 4000};  // claims more than the block holds
  good.append(reinterpret_cast<const char*>(&b), sizeof b);
  good.append(reinterpret_cast<const char*>(&bad), sizeof bad);
  part::PartReader r(tmp.write("damaged.part", good));
  r.readAll();
  EXPECT_NE(r.cutShort().find("damaged record"), std::string::npos) << r.cutShort();
}

}  // namespace
}  // namespace rlscope
