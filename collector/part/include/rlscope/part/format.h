// The part file: what one profiled process appends while it runs, and what rlscope-prof turns
// into the SQLite trace when the run ends (docs/architecture.md, "Collector").
//
// A part is a file header followed by blocks. The collector's writer thread appends one block per
// drained slice of a thread's buffer: a block header naming the thread, then whole records. A
// process killed mid-run leaves a readable prefix: the reader stops at the first block that is
// cut short and says so.
//
// Times in records (every payload field named time, start or end, and only those) are ticks of
// the part's clock (FileHeader::clock): the CPU's invariant timestamp counter where there is one
// (an instruction, cheaper than clock_gettime), else CLOCK_MONOTONIC nanoseconds. kClockSync
// records pair ticks with CLOCK_MONOTONIC at the start, every writer flush and the end; the merge
// converts ticks to nanoseconds between them.
//
// Records are a RecordHeader and a payload: a fixed-size struct copied as bytes (little-endian
// x86-64/aarch64 layout, no padding: every struct below is checked by static_assert) followed by
// the record's strings, each a uint32 length and that many bytes (not NUL-terminated). Unknown
// record types are skipped by size, so a newer collector's parts still load.
#pragma once

#include <cstdint>
#include <type_traits>

namespace rlscope::part {

inline constexpr char kFileMagic[8] = {'R', 'L', 'S', 'C', 'P', 'R', 'T', '1'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::uint32_t kBlockMagic = 0x4b4c4252;  // "RBLK"
// Records bigger than this are refused by the reader (a name that long is corrupt input).
inline constexpr std::uint32_t kMaxRecordBytes = 64u << 20;

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t pid;
  std::uint32_t parentPid;
  std::uint32_t clock;            // ClockKind of every time in this part
  std::int64_t startMonotonicNs;  // CLOCK_MONOTONIC when the collector started in this process
  std::int64_t startWallNs;       // CLOCK_REALTIME at the same instant
  std::uint64_t startTicks;       // the part's clock at the same instant
};
static_assert(sizeof(FileHeader) == 48);

enum class ClockKind : std::uint32_t {
  kMonotonicNs = 0,  // CLOCK_MONOTONIC nanoseconds
  kTicks = 1,        // invariant CPU counter (x86 TSC, aarch64 CNTVCT), converted by kClockSync
};

// tid 0 carries process-wide records (process info, CUDA activity, GPU properties).
struct BlockHeader {
  std::uint32_t magic;
  std::uint32_t tid;
  std::uint32_t payloadBytes;
  std::uint32_t reserved;
};
static_assert(sizeof(BlockHeader) == 16);

enum class RecordType : std::uint16_t {
  // Process and threads.
  kProcessInfo = 1,      // ProcessInfo + strings: executable, command line (NUL-separated argv);
                         // again, later, when the process renamed itself (setproctitle)
  kProcessEnd = 2,       // ProcessEnd: written last by a process that finished its part
  kThreadStart = 3,      // ThreadStart: first record of every thread's first block
  kThreadName = 4,       // ThreadName + string: name (nvtxNameOsThread, pthread name)
  kWarning = 5,          // Instant + string: something the user should know (shown by rlscope-prof)
  kClockSync = 6,        // ClockSync: a tick count and CLOCK_MONOTONIC at the same instant
  kThreadEnd = 7,        // Instant: the thread exited (not written for the main thread)
  kProcessIdentity = 8,  // ProcessIdentity + strings: host, launcher variables (NAME=value\0...)
  // NVTX.
  kRangePush = 10,       // NvtxEvent + string: message (empty when stringHandle is set)
  kRangePushA = 18,      // Instant + string: nvtxRangePushA, the common case, kept small
  kRangePop = 11,        // NvtxPop
  kRangeStart = 12,      // NvtxEvent (rangeId set) + string
  kRangeEnd = 13,        // NvtxRangeEnd
  kMark = 14,            // NvtxEvent + string
  kDomainCreate = 15,    // NvtxHandleName + string: domain name
  kRegisterString = 16,  // NvtxHandleName + string: the registered string
  kNameCategory = 17,    // NvtxHandleName (handle = category) + string: category name
  // CPU categories, from the Python hooks: a per-thread stack of what runs (Python, Backend,
  // Simulator), flattened into rlscope_cpu_intervals by the merge.
  kCategoryPush = 20,  // CategoryPush
  kCategoryPop = 21,   // Instant
  kCategoryName = 22,  // NvtxHandleName (domain 0) + string: the name CategoryPush::name refers to
  kCategoryPopEvents = 23,  // CategoryPopEvents: a pop that counts the Python events before it
  kPythonEvents = 24,       // PythonEvents: the process's Python events in all (tid 0, at its end)
  // CUDA, from CUPTI activity records.
  kKernel = 30,               // Kernel + string: mangled name
  kMemcpy = 31,               // Memcpy
  kMemset = 32,               // Memset
  kApiCall = 33,              // ApiCall + string: API name
  kSynchronization = 34,      // Synchronization
  kOverhead = 35,             // Overhead
  kExternalCorrelation = 36,  // ExternalCorrelation
  kGpuInfo = 37,              // GpuInfo + strings: name, uuid, bus location, chip name
  kGpuActivityStatus = 38,    // GpuActivityStatus + string: reason when unavailable
  kDroppedRecords = 39,       // DroppedRecords
};

struct RecordHeader {
  std::uint16_t type;  // RecordType
  std::uint16_t reserved;
  std::uint32_t bytes;  // the whole record, header included
};
static_assert(sizeof(RecordHeader) == 8);

// --- payloads -----------------------------------------------------------------------------------

struct ProcessInfo {
  std::int64_t start;
  std::uint32_t pid;
  std::uint32_t parentPid;
  std::uint32_t features;       // FeatureBits the collector ran with
  std::uint32_t forkedFromPid;  // != 0: this part began in a fork (without exec) of that pid
};
static_assert(sizeof(ProcessInfo) == 24);

// Where the process runs and what its launcher told it (torchrun's RANK, MPI's ranks): the host
// name and the launcher variables set in its environment at start, as `NAME=value` strings each
// followed by a NUL (the names trace/include/rlscope/trace/launcher_variables.h lists).
struct ProcessIdentity {
  std::uint32_t pid;
  std::uint32_t variableCount;
};
static_assert(sizeof(ProcessIdentity) == 8);

enum FeatureBits : std::uint32_t {
  kFeatureNvtx = 1u << 0,
  kFeatureCudaApi = 1u << 1,
  kFeatureGpuActivity = 1u << 2,
  kFeaturePython = 1u << 3,  // Python <-> native transition tracking
};

enum class EndReason : std::uint32_t {
  kExit = 0,    // exit() or return from main; status = exit status
  kSignal = 1,  // a fatal signal the collector caught (SIGINT, SIGTERM); status = signal number
  kExec = 2,    // the process exec'd: the part of its next image (same pid) continues it
};

struct ProcessEnd {
  std::int64_t end;
  std::uint32_t reason;  // EndReason
  std::int32_t status;
  std::uint32_t reserved[2];
};
static_assert(sizeof(ProcessEnd) == 24);

struct ThreadStart {
  std::int64_t start;
  std::uint32_t tid;
  std::uint32_t reserved;
};
static_assert(sizeof(ThreadStart) == 16);

struct ThreadName {
  std::uint32_t tid;       // the OS thread named (may differ from the block's thread)
  std::uint32_t fromNvtx;  // 1: nvtxNameOsThread, which wins over the OS name (0)
};
static_assert(sizeof(ThreadName) == 8);

struct ClockSync {
  std::uint64_t ticks;
  std::int64_t monotonicNs;
};
static_assert(sizeof(ClockSync) == 16);

struct Instant {
  std::int64_t time;
};
static_assert(sizeof(Instant) == 8);

// Push, start and mark. Handles (domain, registered string) are the collector's own ids, named by
// kDomainCreate / kRegisterString records earlier in the same part; 0 = default domain / none.
struct NvtxEvent {
  std::int64_t time;
  std::uint64_t domain;
  std::uint64_t rangeId;       // start/end ranges; 0 otherwise
  std::uint64_t stringHandle;  // registered message; 0 = the inline string is the message
  std::uint64_t payload;       // raw payload bits (see payloadType)
  std::uint32_t category;
  std::uint32_t color;  // ARGB
  std::uint8_t hasColor;
  std::uint8_t payloadType;  // nvtxPayloadType_t; 0 = none
  std::uint8_t reserved[6];
};
static_assert(sizeof(NvtxEvent) == 56);

struct NvtxPop {
  std::int64_t time;
  std::uint64_t domain;
};
static_assert(sizeof(NvtxPop) == 16);

struct NvtxRangeEnd {
  std::int64_t time;
  std::uint64_t rangeId;
};
static_assert(sizeof(NvtxRangeEnd) == 16);

// What the thread runs from `time` until the matching pop: a trace::Category value (1 Python,
// 2 Backend, 3 Simulator) and the native function's name (a kCategoryName handle; 0 = none).
struct CategoryPush {
  std::int64_t time;
  std::uint32_t category;
  std::uint32_t flags;  // kCategoryPush* bits
  std::uint64_t name;
};
// The push is the collector's own record of a blocking libc call (a Waiting span), not a Python
// <-> native transition: calibration does not price it.
inline constexpr std::uint32_t kCategoryPushNativeWait = 1;
// The other 31 bits: how many Python events (profile-function or sys.monitoring callbacks) the
// thread's tracker handled since its previous push or pop, saturated. Each costs the program
// time where it happened: in the span this push closes (docs/calibration.md, "Python events").
inline constexpr unsigned kCategoryPushEventsShift = 1;
inline constexpr std::uint32_t kCategoryPushMaxEvents = 0x7fffffff;
inline constexpr std::uint32_t categoryPushFlags(bool nativeWait, std::uint64_t events) {
  std::uint64_t n = events < kCategoryPushMaxEvents ? events : kCategoryPushMaxEvents;
  return (nativeWait ? kCategoryPushNativeWait : 0) |
         static_cast<std::uint32_t>(n << kCategoryPushEventsShift);
}
inline constexpr std::uint32_t categoryPushEvents(std::uint32_t flags) {
  return flags >> kCategoryPushEventsShift;
}
static_assert(sizeof(CategoryPush) == 24);

struct CategoryPopEvents {
  std::int64_t time;
  std::uint64_t events;  // as in CategoryPush's flags: the thread's Python events since its last
};
static_assert(sizeof(CategoryPopEvents) == 16);

// The Python tracker's event count of the whole process (every thread, untracked calls included),
// read from the package's counter when the part ends: the total the calibration prices.
struct PythonEvents {
  std::uint64_t events;
};
static_assert(sizeof(PythonEvents) == 8);

struct NvtxHandleName {
  std::uint64_t domain;
  std::uint64_t handle;
};
static_assert(sizeof(NvtxHandleName) == 16);

// CUDA records carry CUPTI's values; times are on the part's clock because the collector
// registers it as CUPTI's timestamp source.
struct Kernel {
  std::int64_t start, end;
  std::uint32_t deviceId, contextId, streamId, correlationId;
  std::int32_t gridX, gridY, gridZ, blockX, blockY, blockZ;
  std::int32_t registersPerThread, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread;
  std::uint32_t localMemoryTotal, sharedMemoryExecuted;
  std::uint64_t gridId, graphNodeId;
  std::uint32_t graphId;
  std::uint8_t launchType, cacheConfigRequested, cacheConfigExecuted, reserved;
};
static_assert(sizeof(Kernel) == 104);

struct Memcpy {
  std::int64_t start, end;
  std::uint64_t bytes;
  std::uint64_t graphNodeId;
  std::uint32_t deviceId, contextId, streamId, correlationId;
  std::uint32_t srcDeviceId, dstDeviceId;  // peer copies; == deviceId otherwise
  std::uint8_t copyKind, srcKind, dstKind, reserved[5];
};
static_assert(sizeof(Memcpy) == 64);

struct Memset {
  std::int64_t start, end;
  std::uint64_t bytes;
  std::uint64_t graphNodeId;
  std::uint32_t deviceId, contextId, streamId, correlationId;
  std::uint32_t value;
  std::uint16_t memoryKind;
  std::uint16_t reserved;
};
static_assert(sizeof(Memset) == 56);

enum class ApiKind : std::uint32_t { kRuntime = 0, kDriver = 1 };

struct ApiCall {
  std::int64_t start, end;
  std::uint32_t kind;  // ApiKind
  std::uint32_t cbid;
  std::uint32_t tid;
  std::uint32_t correlationId;
  std::int32_t returnValue;
  std::uint32_t reserved;
};
static_assert(sizeof(ApiCall) == 40);

struct Synchronization {
  std::int64_t start, end;
  std::uint64_t cudaEventId;
  std::uint64_t cudaEventSyncId;
  std::uint32_t deviceId, contextId, streamId, correlationId;
  std::uint32_t type;  // CUpti_ActivitySynchronizationType
  std::uint32_t reserved;
};
static_assert(sizeof(Synchronization) == 56);

struct Overhead {
  std::int64_t start, end;
  std::uint64_t objectId;      // thread id or device id, per objectKind
  std::uint32_t overheadKind;  // CUpti_ActivityOverheadKind
  std::uint32_t objectKind;    // CUpti_ActivityObjectKind
};
static_assert(sizeof(Overhead) == 32);

struct ExternalCorrelation {
  std::uint64_t externalId;
  std::uint32_t externalKind;
  std::uint32_t correlationId;
};
static_assert(sizeof(ExternalCorrelation) == 16);

// Units as TARGET_INFO_GPU: bytes, bytes/s, Hz.
struct GpuInfo {
  std::int64_t totalMemory, l2CacheSize, memoryBandwidth, clockRate, memoryClockRate;
  std::uint32_t deviceId;
  std::int32_t smCount, computeMajor, computeMinor, memoryBusWidth;
  std::int32_t maxRegistersPerBlock, maxRegistersPerSm, maxShmemPerBlock, maxShmemPerBlockOptin;
  std::int32_t maxShmemPerSm, threadsPerWarp, maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock;
  std::int32_t isDiscrete, reserved;
};
static_assert(sizeof(GpuInfo) == 104);

struct GpuActivityStatus {
  std::int64_t time;
  std::uint32_t recording;  // 1: CUPTI is recording; 0: unavailable (string: why)
  std::uint32_t reserved;
};
static_assert(sizeof(GpuActivityStatus) == 16);

struct DroppedRecords {
  std::uint64_t count;
  std::uint32_t contextId, streamId;
};
static_assert(sizeof(DroppedRecords) == 16);

// The id of the push/pop range a thread opens with its pushIndex-th push (1-based): what the
// collector pushes as CUPTI external correlation while the range is open, and what the merge
// recomputes from the same pushes to tie launches to operations.
constexpr std::uint64_t operationIdOf(std::uint32_t tid, std::uint32_t pushIndex) {
  return (std::uint64_t{tid} << 32) | pushIndex;
}

template <class T>
inline constexpr bool kIsPayload = std::is_trivially_copyable_v<T>&& std::is_standard_layout_v<T>;

}  // namespace rlscope::part
