// Work started on a thread of its own where one is to be had: the analysis runs its independent
// parts (a sweep beside its lookups, the GPU metrics beside the breakdown, halves of a join) on
// both cores, and still completes, in the calling thread, where no thread can be started.
#pragma once

#include <future>
#include <system_error>
#include <type_traits>
#include <utility>

namespace rlscope::trace {

// `work` started on a thread of its own, where one is to be had; otherwise (or with `beside`
// false) it runs at the future's get(), in the caller's thread. What it uses must outlive the
// get() (the future of a thread waits for it when destroyed).
template <class Work>
std::future<std::invoke_result_t<Work>> runBeside(Work work, bool beside = true) {
  if (beside) {
    try {
      return std::async(std::launch::async, work);
    } catch (const std::system_error&) {
      // no thread to be had
    }
  }
  return std::async(std::launch::deferred, std::move(work));
}

}  // namespace rlscope::trace
