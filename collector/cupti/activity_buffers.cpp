#include "activity_buffers.h"

#include <cstdlib>

namespace rlscope::cupti {

CompletedBuffer::~CompletedBuffer() {
  if (data_) owner_->release(data_);
}

ActivityBuffers::ActivityBuffers(std::size_t bufferBytes, std::size_t maxBuffers,
                                 bool rejectWhenFull)
    : bufferBytes_((bufferBytes + kAlignment - 1) / kAlignment * kAlignment),
      maxBuffers_(maxBuffers),
      rejectWhenFull_(rejectWhenFull) {}

ActivityBuffers::~ActivityBuffers() {
  // Buffers still with CUPTI at destruction are leaked on purpose: CUPTI may yet write to them.
  for (auto& [data, valid] : completed_) std::free(data);
}

std::uint8_t* ActivityBuffers::request() {
  std::lock_guard lock(mutex_);
  if (rejectWhenFull_ && outstanding_ >= maxBuffers_) {
    ++rejected_;
    return nullptr;
  }
  auto* data = static_cast<std::uint8_t*>(std::aligned_alloc(kAlignment, bufferBytes_));
  if (!data) {
    ++rejected_;
    return nullptr;
  }
  inFlight_.insert(data);
  ++outstanding_;
  return data;
}

void ActivityBuffers::complete(std::uint8_t* buffer, std::size_t validBytes) {
  std::lock_guard lock(mutex_);
  if (!buffer || inFlight_.erase(buffer) == 0) {
    ++foreign_;
    return;
  }
  if (validBytes == 0) {
    std::free(buffer);
    --outstanding_;
    return;
  }
  completed_.emplace_back(buffer, validBytes);
}

std::vector<CompletedBuffer> ActivityBuffers::takeCompleted() {
  std::deque<std::pair<std::uint8_t*, std::size_t>> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(completed_);
  }
  std::vector<CompletedBuffer> out;
  out.reserve(taken.size());
  for (auto& [data, valid] : taken) out.emplace_back(this, data, valid);
  return out;
}

void ActivityBuffers::release(std::uint8_t* data) {
  std::free(data);
  std::lock_guard lock(mutex_);
  --outstanding_;
}

std::size_t ActivityBuffers::outstanding() const {
  std::lock_guard lock(mutex_);
  return outstanding_;
}

std::size_t ActivityBuffers::inFlight() const {
  std::lock_guard lock(mutex_);
  return inFlight_.size();
}

std::uint64_t ActivityBuffers::rejected() const {
  std::lock_guard lock(mutex_);
  return rejected_;
}

std::uint64_t ActivityBuffers::foreign() const {
  std::lock_guard lock(mutex_);
  return foreign_;
}

}  // namespace rlscope::cupti
