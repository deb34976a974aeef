// The trace rows of a part's CUDA records, as nsys writes them: kernels, copies, memsets and
// synchronizations (CUPTI_ACTIVITY_KIND_*), CUPTI's own overhead (rlscope_events, for overhead
// correction) and the devices (TARGET_INFO_GPU). Times are already nanoseconds (record_times.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "rlscope/part/format.h"
#include "rlscope/part/record_codec.h"
#include "rlscope/trace/records.h"
#include "rlscope/trace/writer.h"

namespace rlscope::merge {

// `names` interns the kernel's mangled, demangled and short names (trace/kernel_names.h).
trace::KernelRecord kernelRow(const part::Kernel& k, std::string_view mangledName,
                              std::int64_t globalPid, trace::TraceWriter& names);
trace::MemcpyRecord memcpyRow(const part::Memcpy& m, std::int64_t globalPid);
trace::MemsetRecord memsetRow(const part::Memset& m, std::int64_t globalPid);
trace::SyncRecord syncRow(const part::Synchronization& s, std::int64_t globalPid);
// A plain event on the process (pid as the part names it).
trace::PlainEventRecord overheadRow(const part::Overhead& o, std::uint32_t pid,
                                    trace::TraceWriter& names);
// The kGpuInfo record `r` holding `g`, with its strings.
trace::GpuInfoRecord gpuInfoRow(const part::GpuInfo& g, const part::RecordView& r);

}  // namespace rlscope::merge
