// The host buffers CUPTI fills with activity records: handed out in the buffer-requested
// callback, queued in the buffer-completed callback (on CUPTI's thread), and taken by the
// collector's writer thread to decode. No CUPTI calls, so the bookkeeping is tested on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace rlscope::cupti {

class ActivityBuffers;

// A completed buffer; freed (and no longer counted as outstanding) when it goes out of scope.
class CompletedBuffer {
 public:
  CompletedBuffer(ActivityBuffers* owner, std::uint8_t* data, std::size_t validBytes)
      : owner_(owner), data_(data), validBytes_(validBytes) {}
  CompletedBuffer(CompletedBuffer&& o) noexcept
      : owner_(o.owner_), data_(o.data_), validBytes_(o.validBytes_) {
    o.data_ = nullptr;
  }
  CompletedBuffer& operator=(CompletedBuffer&&) = delete;
  CompletedBuffer(const CompletedBuffer&) = delete;
  ~CompletedBuffer();

  std::uint8_t* data() const { return data_; }
  std::size_t validBytes() const { return validBytes_; }

 private:
  ActivityBuffers* owner_;
  std::uint8_t* data_;
  std::size_t validBytes_;
};

class ActivityBuffers {
 public:
  // CUPTI recommends 1–10 MiB; 8 MiB (as NVIDIA's samples) keeps callbacks rare. Records need
  // 8-byte alignment.
  static constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
  static constexpr std::size_t kAlignment = 8;
  // 32 × 8 MiB = 256 MiB of records waiting at most (the writer drains every flush, 25 ms by
  // default).
  static constexpr std::size_t kMaxBuffers = 32;

  // rejectWhenFull: answer a request with no buffer once maxBuffers are outstanding, so CUPTI
  // drops (and counts) records instead of the process growing without bound. Only CUPTI 12.9+
  // (API version 27) survives a rejected request; older ones always get a buffer.
  explicit ActivityBuffers(std::size_t bufferBytes = kBufferBytes,
                           std::size_t maxBuffers = kMaxBuffers, bool rejectWhenFull = true);
  ~ActivityBuffers();
  ActivityBuffers(const ActivityBuffers&) = delete;
  ActivityBuffers& operator=(const ActivityBuffers&) = delete;

  // Buffer-requested: a new zero-size-valid buffer of bufferBytes(), or nullptr (rejected).
  std::uint8_t* request();
  // Buffer-completed: queues the buffer for decoding; an empty one is freed at once. Buffers this
  // object did not hand out are ignored (and counted).
  void complete(std::uint8_t* buffer, std::size_t validBytes);
  // Every completed buffer, in completion order; the caller decodes and drops them.
  std::vector<CompletedBuffer> takeCompleted();

  std::size_t bufferBytes() const { return bufferBytes_; }
  // Handed out and not yet freed (with CUPTI, queued, or being decoded).
  std::size_t outstanding() const;
  std::size_t inFlight() const;  // with CUPTI
  std::uint64_t rejected() const;
  std::uint64_t foreign() const;

 private:
  friend class CompletedBuffer;
  void release(std::uint8_t* data);

  const std::size_t bufferBytes_;
  const std::size_t maxBuffers_;
  const bool rejectWhenFull_;
  mutable std::mutex mutex_;
  std::unordered_set<std::uint8_t*> inFlight_;
  std::deque<std::pair<std::uint8_t*, std::size_t>> completed_;
  std::size_t outstanding_ = 0;
  std::uint64_t rejected_ = 0;
  std::uint64_t foreign_ = 0;
};

}  // namespace rlscope::cupti
