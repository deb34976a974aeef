// Runs the analysis panel's analyses (analysis_model.h) on one worker thread, so that the GUI
// thread never waits for one. A newer request supersedes an older one: the older is cancelled at
// its next progress point and its result is never delivered. The last scope's breakdown and the
// what-if of the last (trace, GPU) are kept, so picking another GPU or going back to a scope does
// not analyze the trace again. No Qt: the panel hands results to the GUI thread itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "rlscope/gui_analysis/analysis_model.h"

namespace rlscope::gui {

class AnalysisRunner {
 public:
  // Both called on the worker thread, with the generation submit() returned.
  struct Callbacks {
    std::function<void(std::uint64_t generation, const std::string& line)> progress;
    std::function<void(std::uint64_t generation, AnalysisResult result)> done;
  };

  explicit AnalysisRunner(Callbacks callbacks);
  // Cancels what runs and waits for the worker: at most until the analyzer's next progress point
  // (it reports once per process, after reading the trace).
  ~AnalysisRunner();
  AnalysisRunner(const AnalysisRunner&) = delete;
  AnalysisRunner& operator=(const AnalysisRunner&) = delete;

  // Queues the request in place of any queued or running one; returns its generation.
  std::uint64_t submit(AnalysisRequest request);
  // Supersedes everything with nothing: no result is delivered until the next submit().
  void cancel();
  // The generation of the newest request (0 before the first).
  std::uint64_t generation() const { return generation_.load(); }

 private:
  void loop();
  AnalysisResult run(const AnalysisRequest& request, std::uint64_t generation);

  Callbacks callbacks_;
  std::atomic<std::uint64_t> generation_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<std::pair<std::uint64_t, AnalysisRequest>> pending_;
  bool stop_ = false;
  // Worker thread only.
  std::optional<std::pair<std::string, AnalysisResult>> lastScope_;   // key, result
  std::optional<std::pair<std::string, AnalysisResult>> lastWhatIf_;  // key, whatIf or its error
  std::thread worker_;  // last: started once everything above exists
};

}  // namespace rlscope::gui
