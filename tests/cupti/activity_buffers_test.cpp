// The buffer bookkeeping of the CUPTI callbacks, driven as CUPTI would drive it.
#include "activity_buffers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

namespace rlscope::cupti {
namespace {

TEST(ActivityBuffers, BuffersAreAlignedAndOfTheRequestedSize) {
  ActivityBuffers b(1000, 4);
  EXPECT_EQ(b.bufferBytes(), 1000u);
  std::uint8_t* p = b.request();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % ActivityBuffers::kAlignment, 0u);
  p[999] = 1;  // the whole size is usable (ASan would object otherwise)
  b.complete(p, 0);
  // The default is what CUPTI recommends: 1–10 MiB.
  EXPECT_GE(ActivityBuffers::kBufferBytes, std::size_t{1} << 20);
  EXPECT_LE(ActivityBuffers::kBufferBytes, std::size_t{10} << 20);
  EXPECT_EQ(ActivityBuffers::kBufferBytes % ActivityBuffers::kAlignment, 0u);
}

TEST(ActivityBuffers, SizesAreRoundedUpToTheAlignment) {
  ActivityBuffers b(1001, 1);
  EXPECT_EQ(b.bufferBytes(), 1008u);
}

TEST(ActivityBuffers, CompletedBuffersComeBackInOrderAndAreFreedAfterUse) {
  ActivityBuffers b(64, 8);
  std::uint8_t* first = b.request();
  std::uint8_t* second = b.request();
  std::uint8_t* third = b.request();
  EXPECT_EQ(b.outstanding(), 3u);
  EXPECT_EQ(b.inFlight(), 3u);
  b.complete(second, 24);
  b.complete(first, 40);
  EXPECT_EQ(b.inFlight(), 1u);
  {
    auto done = b.takeCompleted();
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].data(), second);
    EXPECT_EQ(done[0].validBytes(), 24u);
    EXPECT_EQ(done[1].data(), first);
    EXPECT_EQ(done[1].validBytes(), 40u);
    EXPECT_EQ(b.outstanding(), 3u);  // still being decoded
    EXPECT_TRUE(b.takeCompleted().empty());
  }
  EXPECT_EQ(b.outstanding(), 1u);
  b.complete(third, 8);
  EXPECT_EQ(b.takeCompleted().size(), 1u);
  EXPECT_EQ(b.outstanding(), 0u);
}

TEST(ActivityBuffers, EmptyCompletedBuffersAreFreedAtOnce) {
  ActivityBuffers b(64, 8);
  std::uint8_t* p = b.request();
  b.complete(p, 0);
  EXPECT_EQ(b.outstanding(), 0u);
  EXPECT_TRUE(b.takeCompleted().empty());
}

TEST(ActivityBuffers, RequestsBeyondTheCapAreRejectedWhenCuptiCopes) {
  ActivityBuffers b(64, 2, /*rejectWhenFull=*/true);
  std::uint8_t* p1 = b.request();
  std::uint8_t* p2 = b.request();
  ASSERT_NE(p1, nullptr);
  ASSERT_NE(p2, nullptr);
  EXPECT_EQ(b.request(), nullptr);
  EXPECT_EQ(b.rejected(), 1u);
  b.complete(p1, 16);
  EXPECT_EQ(b.request(), nullptr);  // queued for decoding still counts
  b.takeCompleted();                // decoded and freed
  std::uint8_t* p3 = b.request();
  EXPECT_NE(p3, nullptr);
  b.complete(p2, 0);
  b.complete(p3, 0);
  EXPECT_EQ(b.outstanding(), 0u);
}

TEST(ActivityBuffers, OlderCuptiAlwaysGetsABuffer) {
  ActivityBuffers b(64, 1, /*rejectWhenFull=*/false);
  std::uint8_t* p1 = b.request();
  std::uint8_t* p2 = b.request();
  EXPECT_NE(p1, nullptr);
  EXPECT_NE(p2, nullptr);
  EXPECT_EQ(b.rejected(), 0u);
  b.complete(p1, 0);
  b.complete(p2, 0);
}

TEST(ActivityBuffers, BuffersItDidNotHandOutAreIgnored) {
  ActivityBuffers b(64, 2);
  std::uint8_t stranger[64];
  b.complete(stranger, 64);
  b.complete(nullptr, 0);
  std::uint8_t* p = b.request();
  b.complete(p, 8);
  b.complete(p, 8);  // twice: the second is not ours any more
  EXPECT_EQ(b.foreign(), 3u);
  EXPECT_EQ(b.takeCompleted().size(), 1u);
}

TEST(ActivityBuffers, CompletionOnAnotherThreadWhileTheWriterTakes) {
  // CUPTI completes buffers on its own thread while the collector's writer thread takes them.
  ActivityBuffers b(256, 1000);
  constexpr int kBuffers = 500;
  std::thread cupti([&] {
    for (int i = 0; i < kBuffers; ++i) {
      std::uint8_t* p = b.request();
      ASSERT_NE(p, nullptr);
      p[0] = static_cast<std::uint8_t>(i);
      b.complete(p, 1 + static_cast<std::size_t>(i % 200));
    }
  });
  int taken = 0;
  int expected = 0;
  while (taken < kBuffers) {
    for (auto& done : b.takeCompleted()) {
      EXPECT_EQ(done.data()[0], static_cast<std::uint8_t>(expected));
      EXPECT_EQ(done.validBytes(), 1 + static_cast<std::size_t>(expected % 200));
      ++expected;
      ++taken;
    }
  }
  cupti.join();
  EXPECT_EQ(b.outstanding(), 0u);
}

}  // namespace
}  // namespace rlscope::cupti
