#include "thread_buffer.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace rlscope::collector {

namespace {

// Drained chunks of the standard size are kept for reuse: a fresh chunk costs 16 page faults the
// first time it is written, about 10 ns per record at the rates annotations reach. Taken once per
// chunk (64 KiB of records), so the lock is far off the per-record path.
class ChunkPool {
 public:
  void* take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return nullptr;
    void* c = free_.back();
    free_.pop_back();
    return c;
  }
  // False when the pool is full: the caller frees the memory.
  bool give(void* c) {
    std::lock_guard lock(mutex_);
    if (free_.size() >= kMaxChunks) return false;
    free_.push_back(c);
    return true;
  }

 private:
  static constexpr std::size_t kMaxChunks = 256;  // 16 MiB
  std::mutex mutex_;
  std::vector<void*> free_;
};

ChunkPool& pool() {
  static auto* p = new ChunkPool;  // leaked: used by threads that outlive static destructors
  return *p;
}

}  // namespace

ThreadBuffer::Chunk* ThreadBuffer::newChunk(std::uint32_t capacity) {
  void* mem = capacity == kChunkBytes ? pool().take() : nullptr;
  if (!mem) mem = std::malloc(offsetof(Chunk, data) + capacity);
  if (!mem) throw std::bad_alloc();
  auto* c = new (mem) Chunk;
  c->capacity = capacity;
  return c;
}

void ThreadBuffer::freeChunk(Chunk* c) {
  bool standard = c->capacity == kChunkBytes;
  c->~Chunk();
  if (!standard || !pool().give(c)) std::free(c);
}

ThreadBuffer::ThreadBuffer(std::uint32_t tid)
    : tid_(tid), tail_(newChunk(kChunkBytes)), capacity_(kChunkBytes), head_(tail_) {}

ThreadBuffer::~ThreadBuffer() {
  for (Chunk* c = head_; c;) {
    Chunk* next = c->next.load(std::memory_order_relaxed);
    freeChunk(c);
    c = next;
  }
}

void ThreadBuffer::grow(std::size_t n) {
  // A record larger than a chunk (a very long name) gets a chunk of its own size.
  auto capacity = static_cast<std::uint32_t>(n > kChunkBytes ? n : kChunkBytes);
  Chunk* c = newChunk(capacity);
  // The full chunk's final size was published with the last record; linking seals it.
  tail_->next.store(c, std::memory_order_release);
  tail_ = c;
  used_ = 0;
  capacity_ = capacity;
}

bool ThreadBuffer::drain(const std::function<void(const std::byte*, std::size_t)>& sink) {
  for (;;) {
    // Read `next` before `used`: once next is set, used is final.
    Chunk* next = head_->next.load(std::memory_order_acquire);
    std::uint32_t used = head_->used.load(std::memory_order_acquire);
    if (used > drained_) {
      sink(head_->data + drained_, used - drained_);
      drained_ = used;
    }
    if (!next) break;
    freeChunk(head_);
    head_ = next;
    drained_ = 0;
  }
  return finished_.load(std::memory_order_acquire) &&
         head_->next.load(std::memory_order_acquire) == nullptr &&
         head_->used.load(std::memory_order_acquire) == drained_;
}

}  // namespace rlscope::collector
