// The writer's background thread: SQLite work (binding and stepping batches, committing
// transactions) runs here in FIFO order while the caller produces the next rows, so an importer
// parses on one core while SQLite writes on the other. The queue is bounded, which bounds memory.
// The thread is woken once per several tasks, not per task: a wake-up (futex, context switch)
// costs about as much as writing a batch. Internal to the writer.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace rlscope::trace {

class WriterThread {
 public:
  explicit WriterThread(std::size_t maxQueued = 256, std::size_t wakeAt = 16);
  ~WriterThread();
  WriterThread(const WriterThread&) = delete;
  WriterThread& operator=(const WriterThread&) = delete;

  // Queues a task; blocks while the queue is full. Rethrows the first failure of an earlier task.
  void post(std::function<void()> task);
  // Waits until every queued task has run; rethrows the first failure.
  void drain();
  // Stops the thread; tasks still queued are discarded. Idempotent.
  void stop();

 private:
  void run();
  void rethrowFailure();

  const std::size_t maxQueued_;
  const std::size_t wakeAt_;
  std::mutex mutex_;
  std::condition_variable work_;  // the thread waits here for tasks
  std::condition_variable room_;  // callers wait here for room or for the queue to drain
  std::deque<std::function<void()>> queue_;
  bool busy_ = false;
  bool draining_ = false;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace rlscope::trace
