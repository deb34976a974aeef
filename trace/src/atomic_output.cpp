#include "rlscope/trace/atomic_output.h"

#include <unistd.h>

#include <atomic>
#include <string>
#include <system_error>

#include "rlscope/trace/error.h"

namespace rlscope::trace {

namespace {
std::atomic<unsigned> gSequence{0};
}

AtomicOutput::AtomicOutput(std::filesystem::path finalPath) : final_(std::move(finalPath)) {
  if (final_.empty()) throw TraceError("output path is empty");
  if (std::filesystem::is_directory(final_)) {
    throw TraceError(final_.string() + ": is a directory, expected a file path");
  }
  auto dir = final_.parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    throw TraceError(final_.string() + ": directory " + dir.string() + " does not exist");
  }
  temp_ = final_;
  temp_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(gSequence++);
  std::error_code ec;
  std::filesystem::remove(temp_, ec);
}

AtomicOutput::~AtomicOutput() {
  if (committed_) return;
  std::error_code ec;
  std::filesystem::remove(temp_, ec);
  // SQLite side files of an unfinished database.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    auto side = temp_;
    side += suffix;
    std::filesystem::remove(side, ec);
  }
}

void AtomicOutput::commit() {
  std::error_code ec;
  std::filesystem::rename(temp_, final_, ec);
  if (ec) throw TraceError(final_.string() + ": cannot write: " + ec.message());
  committed_ = true;
}

}  // namespace rlscope::trace
