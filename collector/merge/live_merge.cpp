#include "rlscope/merge/live_merge.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace rlscope::merge {

LiveMerge::LiveMerge(const std::filesystem::path& partDir, const std::filesystem::path& out,
                     const MergeOptions& options, Options live)
    : live_(live), merge_(std::make_unique<PartMerge>(partDir, out, options)) {
  thread_ = std::thread([this] { run(); });
}

LiveMerge::~LiveMerge() {
  stop();
}

void LiveMerge::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LiveMerge::run() {
  // Nice values are per thread on Linux. Only this thread, which reads and decodes the parts,
  // gives way to the program: the trace writer's thread was started by the caller and keeps its
  // priority, since it also finishes the trace after the run, while the user waits (an
  // unprivileged thread cannot take a lowered priority back). Failing to lower ours is harmless.
  if (live_.niceness > 0) {
    auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    errno = 0;
    int now = ::getpriority(PRIO_PROCESS, tid);
    if (errno == 0) ::setpriority(PRIO_PROCESS, tid, std::min(now + live_.niceness, 19));
  }
  try {
    for (std::uint64_t read = 0;;) {
      {
        // Straight on while the last look found something (a merge that fell behind catches
        // up); otherwise the next flush is about `interval` away.
        std::unique_lock lock(mutex_);
        auto wait = read > 0 ? std::chrono::milliseconds(0) : live_.interval;
        if (wake_.wait_for(lock, wait, [&] { return stopping_; })) return;
      }
      // merge_ is only the caller's again once this thread has ended.
      read = merge_->mergeAvailable();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
  }
}

MergeReport LiveMerge::finish(const std::function<void(MergeOptions&)>& complete) {
  stop();
  if (error_) std::rethrow_exception(error_);
  if (!merge_) throw std::logic_error("LiveMerge::finish called twice");
  auto merge = std::move(merge_);
  if (complete) complete(merge->options());
  return merge->finish();
}

}  // namespace rlscope::merge
