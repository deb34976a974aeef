// Copies every row of one trace into a TraceWriter, moved onto another trace's clock and ids:
// what `rlscope merge` does with each host's trace of a job. Times are shifted, processes whose
// pid another trace of the job already uses get a free one (rlscope_processes.pid keeps the OS
// pid), GPUs of another host get device ids of their own, operation ids stay unique, and strings
// are interned anew.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "rlscope/trace/reader.h"
#include "rlscope/trace/writer.h"

namespace rlscope::trace {

struct CopyMapping {
  TimeNs timeOffset = 0;                      // added to every time of the copied trace
  std::map<std::int64_t, std::int64_t> pids;  // packed pid -> packed pid in the output
  std::int64_t deviceOffset = 0;              // added to every device id
  std::int64_t operationIdOffset = 0;         // added to operation ids (parents, external ids)
};

struct CopyStats {
  std::uint64_t rows = 0;
  std::int64_t maxOperationId = 0;  // in the output's numbering
  std::int64_t maxDeviceId = -1;    // in the output's numbering; -1: no device
};

// Copies every table but rlscope_meta and rlscope_calibration (the caller's to decide) and
// writes an identity row for every process (its host from the trace's meta where it had none).
// rlscope_events keep their pid and tid text as the source format wrote them.
CopyStats copyTrace(TraceReader& from, TraceWriter& to, const CopyMapping& mapping);

}  // namespace rlscope::trace
