// An output file that appears at its final path only when complete: work happens in a temporary
// file beside it, commit() renames it into place, and destruction without commit removes it. A
// failed or interrupted command therefore never leaves a half-written file in place of a good one.
#pragma once

#include <filesystem>

namespace rlscope::trace {

class AtomicOutput {
 public:
  explicit AtomicOutput(std::filesystem::path finalPath);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::filesystem::path& tempPath() const { return temp_; }
  const std::filesystem::path& finalPath() const { return final_; }
  void commit();  // throws TraceError when the rename fails

 private:
  std::filesystem::path final_;
  std::filesystem::path temp_;
  bool committed_ = false;
};

}  // namespace rlscope::trace
