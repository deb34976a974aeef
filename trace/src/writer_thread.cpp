#include "writer_thread.h"

namespace rlscope::trace {

WriterThread::WriterThread(std::size_t maxQueued)
    : maxQueued_(maxQueued), thread_([this] { run(); }) {}

WriterThread::~WriterThread() {
  stop();
}

void WriterThread::post(std::function<void()> task) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < maxQueued_ || failure_ || stopping_; });
  rethrowFailure();
  queue_.push_back(std::move(task));
  changed_.notify_all();
}

void WriterThread::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || failure_ || stopping_; });
  rethrowFailure();
}

void WriterThread::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void WriterThread::rethrowFailure() {
  if (failure_) std::rethrow_exception(failure_);
}

void WriterThread::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (stopping_) return;
    auto task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    changed_.notify_all();  // room in the queue
    lock.unlock();
    std::exception_ptr failure;
    try {
      task();
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (failure && !failure_) {
      failure_ = failure;
      queue_.clear();  // later work depends on what failed
    }
    changed_.notify_all();
  }
}

}  // namespace rlscope::trace
