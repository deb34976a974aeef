// The rows of a trace, one struct per table (trace format v1, docs/trace-format.md).
//
// Times are integer nanoseconds on the trace's one clock. Names are interned: a StringId refers to
// a row of StringIds. Column names follow Nsight Systems' SQLite export where the table is one of
// its tables, so the struct field names match the SQL a user writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rlscope::trace {

using TimeNs = std::int64_t;
using StringId = std::int64_t;
inline constexpr StringId kNoString = 0;  // StringIds.id starts at 1

// CPU and GPU categories (docs/trace-format.md). Values are stored in
// rlscope_cpu_intervals.category and listed in the ENUM_RLSCOPE_CATEGORY table.
enum class Category : int {
  kPython = 1,
  kBackend = 2,
  kSimulator = 3,
  kCudaApi = 4,
  kNative = 5,
  kGpuKernel = 6,
  kGpuMemcpy = 7,
  kGpuMemset = 8,
  // The thread is blocked (a sleep, a lock, a pipe or socket read, select/poll, waitpid): no CPU
  // time. Recorded for the waiting calls Python tracking knows (docs/python.md).
  kWaiting = 9,
};
inline constexpr int kCategoryCount = 9;
// Time on a GPU (kernels, copies, memsets): the categories ENUM_RLSCOPE_CATEGORY calls "GPU".
constexpr bool isGpuCategory(Category c) {
  return c == Category::kGpuKernel || c == Category::kGpuMemcpy || c == Category::kGpuMemset;
}
std::string_view categoryName(Category c);
std::optional<Category> categoryFromName(std::string_view name);

// Where an operation came from (rlscope_operations.source).
enum class OperationSource : int {
  kAnnotation = 0,            // rlscope annotation API (C, C++ or Python)
  kNvtx = 1,                  // derived from an NVTX_EVENTS range row of the same trace
  kKinetoUserAnnotation = 2,  // imported from a Kineto `user_annotation` event
};

// NVTX_EVENTS.eventType values of Nsight Systems (ENUM_NSYS_EVENT_TYPE).
enum class NvtxEventType : int {
  kCategory = 33,
  kMark = 34,
  kThread = 39,
  kPushPopRange = 59,
  kStartEndRange = 60,
  kDomainCreate = 75,
  kDomainDestroy = 76,
};

// CUPTI_ACTIVITY_KIND_SYNCHRONIZATION.syncType (CUpti_ActivitySynchronizationType).
enum class SyncType : int {
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
};

// --- rlscope's own tables -----------------------------------------------------------------------

struct ProcessRecord {
  std::int64_t globalPid = 0;  // packed as in nsys: pid << 24
  std::int64_t pid = 0;        // OS pid as recorded (may differ from the packed one if remapped)
  std::int64_t parentPid = 0;  // 0 when unknown
  std::string name;
  std::string commandLine;
  TimeNs start = 0;  // 0 when unknown
  TimeNs end = 0;
  std::optional<int> exitStatus;
};

struct ThreadRecord {
  std::int64_t globalTid = 0;
  std::int64_t globalPid = 0;
  std::int64_t tid = 0;  // OS tid as recorded
  std::string name;
};

struct CpuIntervalRecord {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t globalTid = 0;
  Category category = Category::kNative;
  StringId nameId = kNoString;  // e.g. the aten op or Python function
  std::string args;             // JSON object text of extra attributes, empty when none
  // rlscope-prof's Python tracker: the profile-function or sys.monitoring callbacks it handled
  // on this thread during the interval, each a cost to the program there (docs/calibration.md).
  std::int64_t pythonEvents = 0;
};

struct OperationRecord {
  std::int64_t id = 0;  // unique in the trace, > 0
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t globalTid = 0;
  StringId nameId = kNoString;
  std::int64_t parentId = 0;  // 0 = outermost on its thread
  int depth = 0;              // 0 = outermost
  OperationSource source = OperationSource::kAnnotation;
  std::string args;
};

struct PhaseRecord {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t globalPid = 0;
  StringId nameId = kNoString;
};

// An event of the source that maps to none of the tables above (Kineto categories such as
// `cuda_profiler_range`, instant events, flows other than `ac2g`). Kept so nothing is lost. `pid`
// and `tid` are the source's own values, which may be text (Kineto uses "Spans", "Traces").
struct PlainEventRecord {
  TimeNs start = 0;
  TimeNs end = 0;  // == start for instants and flow points
  std::string pid;
  std::string tid;
  StringId nameId = kNoString;
  StringId categoryId = kNoString;  // the source's category string
  std::string phase;                // Chrome trace `ph` ("X", "i", "s", "f", ...)
  std::string args;                 // JSON object text: args plus id/bp/s of the source event
};

// rlscope_external_correlation: CUPTI correlation id -> the operation open when it was launched.
struct ExternalCorrelationRecord {
  std::int64_t globalPid = 0;
  std::int64_t correlationId = 0;
  std::int64_t externalId = 0;
};

struct CalibrationRecord {
  std::string source;  // "cupti", "cuda_api_interception", "python_transition", "annotation"
  std::string name;    // e.g. the CUDA API name; empty for a source-wide cost
  double meanNs = 0;
  double stdNs = 0;
  std::int64_t count = 0;
  // The median and the robust spread (1.4826 × MAD) over the repetitions; absent in traces
  // written before rlscope 0.2, whose calibrations had only the mean and standard deviation.
  std::optional<double> medianNs, spreadNs;
};

// --- Nsight-Systems-compatible tables -----------------------------------------------------------

// CUPTI_ACTIVITY_KIND_KERNEL
struct KernelRecord {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t deviceId = 0;
  std::int64_t contextId = 0;
  std::int64_t streamId = 0;
  std::int64_t correlationId = 0;
  std::int64_t globalPid = 0;
  StringId demangledName = kNoString;
  StringId shortName = kNoString;
  StringId mangledName = kNoString;
  std::int64_t launchType = 0;
  std::int64_t cacheConfig = 0;
  std::int64_t registersPerThread = 0;
  std::int64_t gridX = 0, gridY = 0, gridZ = 0;
  std::int64_t blockX = 0, blockY = 0, blockZ = 0;
  std::int64_t staticSharedMemory = 0;
  std::int64_t dynamicSharedMemory = 0;
  std::int64_t localMemoryPerThread = 0;
  std::int64_t localMemoryTotal = 0;
  std::int64_t gridId = 0;
  std::int64_t sharedMemoryExecuted = 0;
  std::int64_t graphNodeId = 0;
  std::int64_t graphId = 0;
};

// CUPTI_ACTIVITY_KIND_RUNTIME and CUPTI_ACTIVITY_KIND_DRIVER
enum class ApiKind { kRuntime, kDriver };
struct ApiCallRecord {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t eventClass = 0;  // ENUM_NSYS_EVENT_CLASS: 0 runtime, 1 driver
  std::int64_t globalTid = 0;
  std::int64_t correlationId = 0;
  StringId nameId = kNoString;
  std::int64_t returnValue = 0;
  std::int64_t callchainId = 0;  // 0 = none
  std::int64_t cbid = 0;         // CUPTI callback id, 0 when unknown (rlscope extension column)
};

// CUPTI_ACTIVITY_KIND_MEMCPY
struct MemcpyRecord {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t deviceId = 0;
  std::int64_t contextId = 0;
  std::int64_t streamId = 0;
  std::int64_t correlationId = 0;
  std::int64_t globalPid = 0;
  std::int64_t bytes = 0;
  std::int64_t copyKind = 0;  // ENUM_CUDA_MEMCPY_OPER: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ...
  std::int64_t srcKind = 0;   // ENUM_CUDA_MEM_KIND: 0 pageable, 1 pinned, 2 device, ...
  std::int64_t dstKind = 0;
  std::int64_t srcDeviceId = 0;
  std::int64_t dstDeviceId = 0;
  std::int64_t graphNodeId = 0;
};

// CUPTI_ACTIVITY_KIND_MEMSET
struct MemsetRecord {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t deviceId = 0;
  std::int64_t contextId = 0;
  std::int64_t streamId = 0;
  std::int64_t correlationId = 0;
  std::int64_t globalPid = 0;
  std::int64_t value = 0;
  std::int64_t bytes = 0;
  std::int64_t memKind = 0;
  std::int64_t graphNodeId = 0;
};

// CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
struct SyncRecord {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t deviceId = 0;
  std::int64_t contextId = 0;
  std::int64_t streamId = 0;
  std::int64_t correlationId = 0;
  std::int64_t globalPid = 0;
  SyncType syncType = SyncType::kUnknown;
  std::int64_t eventId = 0;      // CUDA event handle; reused by CUDA, so...
  std::int64_t eventSyncId = 0;  // ...join event records on this unique id instead (nsys)
};

// NVTX_EVENTS
// nvtxPayloadType_t.
enum class NvtxPayloadType : int {
  kNone = 0,
  kUint64 = 1,
  kInt64 = 2,
  kDouble = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat = 6,
};

struct NvtxRecord {
  TimeNs start = 0;
  std::optional<TimeNs> end;  // none for marks and domain rows
  NvtxEventType eventType = NvtxEventType::kPushPopRange;
  std::int64_t rangeId = 0;
  std::int64_t category = 0;
  std::optional<std::int64_t> color;
  std::string text;  // unregistered message; empty when textId is set
  std::int64_t globalTid = 0;
  std::int64_t endGlobalTid = 0;  // start/end ranges may end on another thread; 0 = same
  StringId textId = kNoString;    // registered string
  std::int64_t domainId = 0;
  // The event's payload, in the column of its type as nsys stores it (uint64Value, int64Value,
  // doubleValue, uint32Value, int32Value, floatValue); none when it has no payload.
  NvtxPayloadType payloadType = NvtxPayloadType::kNone;
  std::uint64_t payloadBits = 0;  // the value's bits, as NVTX's payload union holds them
};

// ThreadNames
struct ThreadNameRecord {
  StringId nameId = kNoString;
  std::int64_t priority = 0;
  std::int64_t globalTid = 0;
};

// TARGET_INFO_GPU. Units as nsys: bytes, bytes/s, Hz.
struct GpuInfoRecord {
  std::int64_t id = 0;  // device ordinal used in deviceId columns
  std::string name;
  std::string busLocation;
  std::int64_t isDiscrete = 1;
  std::int64_t l2CacheSize = 0;
  std::int64_t totalMemory = 0;
  std::int64_t memoryBandwidth = 0;  // bytes/s
  std::int64_t clockRate = 0;        // Hz (SM clock)
  std::int64_t smCount = 0;
  std::string uuid;
  std::string chipName;
  std::int64_t computeMajor = 0;
  std::int64_t computeMinor = 0;
  std::int64_t maxIPC = 0;
  std::int64_t maxRegistersPerBlock = 0;
  std::int64_t maxShmemPerBlock = 0;
  std::int64_t maxShmemPerBlockOptin = 0;
  std::int64_t maxShmemPerSm = 0;
  std::int64_t maxRegistersPerSm = 0;
  std::int64_t threadsPerWarp = 0;
  std::int64_t maxWarpsPerSm = 0;
  std::int64_t maxBlocksPerSm = 0;
  std::int64_t maxThreadsPerBlock = 0;
  std::int64_t memoryClockRate = 0;  // Hz (rlscope extension column)
  std::int64_t memoryBusWidth = 0;   // bits (rlscope extension column)
};

}  // namespace rlscope::trace
