// Merges a run's parts into its trace on a background thread while the run goes on, so that
// when the program exits only its last moments are left to merge (docs/architecture.md,
// "Merging while the run runs"). The thread that reads and decodes the parts runs at a lower
// priority than the program: on a machine with no idle core, the program keeps its share and the
// merge catches up at the end.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "rlscope/merge/part_merger.h"

namespace rlscope::merge {

class LiveMerge {
 public:
  struct Options {
    int niceness = 10;                        // added to the thread's nice value
    std::chrono::milliseconds interval{100};  // between looks at the parts (a flush)
  };

  // Creates the trace's temporary file (throws std::runtime_error with one line when it cannot:
  // before the run, not after it) and starts the thread, which merges every `interval`.
  LiveMerge(const std::filesystem::path& partDir, const std::filesystem::path& out,
            const MergeOptions& options, Options live);
  // Options{}: a default argument cannot use the nested struct's member initializers here.
  LiveMerge(const std::filesystem::path& partDir, const std::filesystem::path& out,
            const MergeOptions& options)
      : LiveMerge(partDir, out, options, Options{}) {}
  // Without finish(): stops the thread and leaves no trace.
  ~LiveMerge();
  LiveMerge(const LiveMerge&) = delete;
  LiveMerge& operator=(const LiveMerge&) = delete;

  // The run is over: stops the thread, then merges the rest and commits on the calling thread.
  // `complete` may set what is known only now (MergeOptions::commandElapsedNs, progress). Throws
  // std::runtime_error with one line when merging failed, here or on the thread.
  MergeReport finish(const std::function<void(MergeOptions&)>& complete = {});

 private:
  void run();
  void stop();

  Options live_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::unique_ptr<PartMerge> merge_;  // the thread's while it runs; the caller's after stop()
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace rlscope::merge
