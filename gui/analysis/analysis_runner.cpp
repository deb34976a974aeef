#include "rlscope/gui_analysis/analysis_runner.h"

#include <filesystem>
#include <utility>

namespace rlscope::gui {

namespace {

// What a cached result depends on: the file as it is now (a trace written again at the same
// path is another trace), and the request's fields.
std::string fileKey(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  auto time = std::filesystem::last_write_time(path, ec);
  return path + '\n' + std::to_string(ec ? 0 : size) + '\n' +
         std::to_string(ec ? 0 : time.time_since_epoch().count());
}

std::string scopeKey(const AnalysisRequest& r) {
  const auto& s = r.scope;
  return fileKey(r.tracePath) + '\n' + std::to_string(static_cast<int>(s.kind)) + ' ' +
         std::to_string(s.start) + ' ' + std::to_string(s.end) + ' ' +
         std::to_string(s.operationId) + ' ' + s.operationName + '\n' + (r.correct ? "1" : "0");
}

}  // namespace

AnalysisRunner::AnalysisRunner(Callbacks callbacks)
    : callbacks_(std::move(callbacks)), worker_([this] { loop(); }) {}

AnalysisRunner::~AnalysisRunner() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    pending_.reset();
  }
  ++generation_;  // cancels what runs
  wake_.notify_all();
  worker_.join();
}

std::uint64_t AnalysisRunner::submit(AnalysisRequest request) {
  std::uint64_t generation;
  {
    std::lock_guard lock(mutex_);
    generation = ++generation_;
    pending_.emplace(generation, std::move(request));
  }
  wake_.notify_all();
  return generation;
}

void AnalysisRunner::cancel() {
  std::lock_guard lock(mutex_);
  ++generation_;
  pending_.reset();
}

void AnalysisRunner::loop() {
  for (;;) {
    std::pair<std::uint64_t, AnalysisRequest> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || pending_; });
      if (stop_) return;
      job = std::move(*pending_);
      pending_.reset();
    }
    AnalysisResult result = run(job.second, job.first);
    // Superseded meanwhile: the newer request's result is the one to show.
    if (job.first == generation_.load() && callbacks_.done)
      callbacks_.done(job.first, std::move(result));
  }
}

AnalysisResult AnalysisRunner::run(const AnalysisRequest& request, std::uint64_t generation) {
  AnalysisProgress progress = [this, generation](const std::string& line) {
    if (generation != generation_.load()) return false;
    if (callbacks_.progress) callbacks_.progress(generation, line);
    return true;
  };
  AnalysisResult result;
  std::string key = scopeKey(request);
  if (lastScope_ && lastScope_->first == key) {
    result = lastScope_->second;
  } else {
    result = analyzeScope(request, progress);
    if (result.ok()) lastScope_.emplace(key, result);
  }
  if (!result.ok() || request.whatIfGpu.empty()) return result;

  std::string whatIfKey = fileKey(request.tracePath) + '\n' + request.whatIfGpu;
  if (!lastWhatIf_ || lastWhatIf_->first != whatIfKey) {
    AnalysisResult w;
    if (!addWhatIf(request, progress, w)) return w;
    lastWhatIf_.emplace(whatIfKey, std::move(w));
  }
  result.whatIf = lastWhatIf_->second.whatIf;
  result.whatIfError = lastWhatIf_->second.whatIfError;
  return result;
}

}  // namespace rlscope::gui
