// TraceWriter: builds a trace file from records. Prepared statements, rows batched into
// transactions, no journal (or WAL on request) while writing, strings interned into StringIds,
// indexes built once at the end. The file appears at its path only on commit(); a writer destroyed
// without commit (an error, an exception) leaves nothing behind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "rlscope/trace/process_identity.h"
#include "rlscope/trace/records.h"

namespace rlscope::trace {

struct WriterOptions {
  // kOff (default): no journal while loading. The file is private until commit() renames it
  // into place, so a crash loses only the temporary file, and every page is written once.
  // kWal: write-ahead log, for a trace that other processes read while it is being written;
  // commit() checkpoints it back into one self-contained file.
  enum class Journal { kOff, kWal };
  Journal journal = Journal::kOff;
  // kAtCommit (default): indexes are built once by commit(), after the bulk load: the fastest
  // total when the caller produces rows faster than SQLite takes them. kDuringLoad: the writer
  // thread keeps them up to date while it inserts, which costs it more per row but leaves
  // commit() almost nothing to do: the better choice when the caller (an importer parsing
  // JSON) is the bottleneck and the writer thread has time to spare.
  enum class Indexing { kAtCommit, kDuringLoad };
  Indexing indexing = Indexing::kAtCommit;
  // Rows per transaction. Bounds the memory SQLite holds for uncommitted pages.
  std::size_t rowsPerTransaction = 200'000;
  // SQLite page cache in KiB; the writer's memory stays within this plus the intern table.
  std::size_t cacheKiB = 64 * 1024;
};

class TraceWriter {
 public:
  explicit TraceWriter(const std::filesystem::path& path, WriterOptions options = {});
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // The id of a string in StringIds, inserting it the first time it is seen.
  StringId intern(std::string_view text);

  void setMeta(std::string_view key, std::string_view value);
  void addProcess(const ProcessRecord& r);
  void addProcessIdentity(const ProcessIdentityRecord& r);
  void addThread(const ThreadRecord& r);
  void addCpuInterval(const CpuIntervalRecord& r);
  void addOperation(const OperationRecord& r);
  void addPhase(const PhaseRecord& r);
  void addPlainEvent(const PlainEventRecord& r);
  void addExternalCorrelation(const ExternalCorrelationRecord& r);
  void addCalibration(const CalibrationRecord& r);
  void addKernel(const KernelRecord& r);
  void addApiCall(ApiKind kind, const ApiCallRecord& r);
  void addMemcpy(const MemcpyRecord& r);
  void addMemset(const MemsetRecord& r);
  void addSync(const SyncRecord& r);
  void addNvtx(const NvtxRecord& r);
  void addThreadName(const ThreadNameRecord& r);
  void addGpuInfo(const GpuInfoRecord& r);

  // The GPU activity tables whose launch an importer may learn only after it added the row.
  enum class GpuTable { kKernel, kMemcpy, kMemset, kSync };
  // Sets the globalPid and correlationId of a row already added to a GPU activity table; `row` is
  // its 1-based position among this writer's add calls for that table (its rowid). An importer
  // can then write GPU records as it reads them, while SQLite has time to spare, and correct the
  // few whose launching process (or, for ROCm traces, launching call) only the end of the input
  // settles.
  void setGpuLaunch(GpuTable which, std::int64_t row, std::int64_t globalPid,
                    std::int64_t correlationId);

  // Finishes the file (last transaction, indexes, single-file journal) and moves it into place.
  void commit();

  std::uint64_t rowsWritten() const;
  const std::filesystem::path& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlscope::trace
