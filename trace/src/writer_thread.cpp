#include "writer_thread.h"

namespace rlscope::trace {

WriterThread::WriterThread(std::size_t maxQueued, std::size_t wakeAt)
    : maxQueued_(maxQueued), wakeAt_(wakeAt), thread_([this] { run(); }) {}

WriterThread::~WriterThread() {
  stop();
}

void WriterThread::post(std::function<void()> task) {
  std::unique_lock lock(mutex_);
  room_.wait(lock, [&] { return queue_.size() < maxQueued_ || failure_ || stopping_; });
  rethrowFailure();
  queue_.push_back(std::move(task));
  if (queue_.size() == wakeAt_ || queue_.size() == maxQueued_) work_.notify_one();
}

void WriterThread::drain() {
  std::unique_lock lock(mutex_);
  draining_ = true;
  work_.notify_one();
  room_.wait(lock, [&] { return (queue_.empty() && !busy_) || failure_ || stopping_; });
  draining_ = false;
  rethrowFailure();
}

void WriterThread::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  work_.notify_all();
  room_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WriterThread::rethrowFailure() {
  if (failure_) std::rethrow_exception(failure_);
}

void WriterThread::run() {
  std::deque<std::function<void()>> tasks;
  std::unique_lock lock(mutex_);
  while (true) {
    work_.wait(lock, [&] {
      return stopping_ || queue_.size() >= wakeAt_ || (draining_ && !queue_.empty());
    });
    if (stopping_) return;
    tasks.swap(queue_);  // take everything queued: one lock round trip per many tasks
    busy_ = true;
    room_.notify_all();
    lock.unlock();
    std::exception_ptr failure;
    try {
      for (auto& task : tasks) task();
    } catch (...) {
      failure = std::current_exception();
    }
    tasks.clear();
    lock.lock();
    busy_ = false;
    if (failure && !failure_) {
      failure_ = failure;
      queue_.clear();  // later work depends on what failed
    }
    room_.notify_all();
  }
}

}  // namespace rlscope::trace
