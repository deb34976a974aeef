#include "thread_buffer.h"

#include <cstdlib>
#include <new>

namespace rlscope::collector {

ThreadBuffer::Chunk* ThreadBuffer::newChunk(std::uint32_t capacity) {
  void* mem = std::malloc(offsetof(Chunk, data) + capacity);
  if (!mem) throw std::bad_alloc();
  auto* c = new (mem) Chunk;
  c->capacity = capacity;
  return c;
}

ThreadBuffer::ThreadBuffer(std::uint32_t tid)
    : tid_(tid), tail_(newChunk(kChunkBytes)), capacity_(kChunkBytes), head_(tail_) {}

ThreadBuffer::~ThreadBuffer() {
  for (Chunk* c = head_; c;) {
    Chunk* next = c->next.load(std::memory_order_relaxed);
    c->~Chunk();
    std::free(c);
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
    head_->~Chunk();
    std::free(head_);
    head_ = next;
    drained_ = 0;
  }
  return finished_.load(std::memory_order_acquire) &&
         head_->next.load(std::memory_order_acquire) == nullptr &&
         head_->used.load(std::memory_order_acquire) == drained_;
}

}  // namespace rlscope::collector
