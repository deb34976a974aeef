// One application thread's record buffer: a chain of chunks the thread fills and the collector's
// writer thread drains, single producer / single consumer, without locks (Tracy's design). The
// producer publishes how far a chunk is filled with a release store after each whole record, so
// the consumer only ever sees whole records; a full chunk is sealed by linking the next one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

namespace rlscope::collector {

class ThreadBuffer {
 public:
  static constexpr std::uint32_t kChunkBytes = 64 * 1024;

  explicit ThreadBuffer(std::uint32_t tid);
  ~ThreadBuffer();
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  std::uint32_t tid() const { return tid_; }

  // --- producer (the owning thread) ---
  // Room for n bytes; write them, then publish(n).
  std::byte* reserve(std::size_t n) {
    if (capacity_ - used_ < n) grow(n);
    return tail_->data + used_;
  }
  void publish(std::size_t n) {
    used_ += static_cast<std::uint32_t>(n);
    tail_->used.store(used_, std::memory_order_release);
  }
  // The thread has exited: nothing more will be written.
  void finish() { finished_.store(true, std::memory_order_release); }

  // Per-thread count of push/pop ranges opened, for operation ids (collector.h).
  std::uint32_t nextPushIndex() { return ++pushes_; }
  // NVTX's return values: the level of the range pushed (0-based) or left.
  int enter() { return depth_++; }
  int leave() { return depth_ > 0 ? --depth_ : -1; }

  // --- consumer (the writer thread) ---
  // Hands every published byte not yet drained to sink (possibly in several calls, each a run of
  // whole records) and frees the chunks left behind. Returns true when the buffer is finished and
  // empty: the caller may delete it.
  bool drain(const std::function<void(const std::byte*, std::size_t)>& sink);

 private:
  struct Chunk {
    std::atomic<std::uint32_t> used{0};
    std::atomic<Chunk*> next{nullptr};
    std::uint32_t capacity = 0;
    std::byte data[1];  // capacity bytes, allocated with the chunk
  };
  static Chunk* newChunk(std::uint32_t capacity);
  static void freeChunk(Chunk* c);
  void grow(std::size_t n);

  const std::uint32_t tid_;
  // Producer side.
  Chunk* tail_;
  std::uint32_t used_ = 0;
  std::uint32_t capacity_;
  std::uint32_t pushes_ = 0;
  int depth_ = 0;
  // Consumer side.
  Chunk* head_;
  std::uint32_t drained_ = 0;
  std::atomic<bool> finished_{false};
};

}  // namespace rlscope::collector
