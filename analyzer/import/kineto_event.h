// One traceEvents entry of a Kineto trace: its members as read (RawEvent), the args that become
// typed columns (GpuArgs), and what kind of trace row it maps to (classify) with Kineto's names
// of copy, memory and synchronisation kinds as the trace's enums.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kineto_json.h"
#include "rlscope/trace/records.h"

namespace rlscope::import::kineto {

// The args of GPU-side and CUDA API events that become typed columns.
struct GpuArgs {
  std::int64_t device = -1, stream = -1, context = 0, correlation = 0, cbid = 0;
  std::int64_t returnValue = 0, registers = 0, sharedMemory = 0, bytes = 0, value = 0;
  std::int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  std::int64_t eventId = 0, eventSyncId = 0, operationId = 0;
  // rlscope's own export adds the columns Kineto does not have; -1 = absent.
  std::int64_t staticShared = -1, dynamicShared = -1, localPerThread = 0, localTotal = 0;
  std::int64_t gridId = 0, launchType = 0, cacheConfig = 0, graphId = 0, graphNodeId = 0;
  std::int64_t copyKind = -1, srcKind = -1, dstKind = -1, srcDevice = -1, dstDevice = -1;
  std::int64_t memKind = -1;
  std::string syncKind, shortName, mangledName;
  // rlscope.nvtx
  std::int64_t nvtxEventType = 0, rangeId = 0, nvtxCategory = 0, domainId = 0, endGlobalTid = 0;
  std::optional<std::int64_t> color;
  bool registered = false;
};

// One traceEvents entry, fields as read. Views point into the input or the parser's string
// buffer, both alive for the whole import.
struct RawEvent {
  std::string_view ph;
  std::string_view cat;
  std::string_view name;
  LooseId pid;
  LooseId tid;
  std::string_view tsToken;
  std::string_view durToken;
  std::string_view args;  // raw JSON object text, empty when absent
  std::string_view id;    // flow id token (also kept in extras)
  // Other top-level members (key, raw JSON value): turned into JSON text only if the event is
  // kept as a plain event; most are ac2g flow members, which are not.
  std::vector<std::pair<std::string_view, std::string_view>> extras;
  // Args read into columns during the first pass, when the category came before them.
  bool hasTypedArgs = false;
  GpuArgs typedArgs;

  void reset() {
    ph = cat = name = tsToken = durToken = args = id = {};
    hasTypedArgs = false;
    pid.isInt = tid.isInt = false;
    pid.text.clear();
    tid.text.clear();
    extras.clear();
  }
};

enum class Kind {
  kCpuInterval,
  kOperation,
  kPhase,
  kRuntime,
  kDriver,
  kKernel,
  kMemcpy,
  kMemset,
  kSync,
  kNvtx,
  kAc2gFlow,
  kMetadata,
  kPlain,
};

// The kind of row an event of phase `ph` and category `cat` becomes, and for CPU intervals their
// category (docs/trace-format.md, "Importing Kineto JSON").
Kind classify(std::string_view ph, std::string_view cat, std::optional<trace::Category>& category);

// Whether this event's args go into typed columns and never into a raw-args column: known
// from the fields read so far. CPU-side kinds qualify only once their pid and tid are known to
// be integers (on a text track they are kept as plain events, args and all).
bool argsAreTyped(const RawEvent& e);

// Reads an event's members into `e` (reset first); typed args are read into columns when the
// category came before them.
void readEvent(od::object obj, RawEvent& e, const Where& where);
// The same for one element of an events array, which must be a JSON object.
void readElement(simdjson::simdjson_result<od::value> element, RawEvent& e, const Where& where);

// Reads the args of a GPU record, CUDA API call or NVTX event into `a`.
void readTypedArgs(od::object obj, GpuArgs& a, const Where& where);

// ENUM_CUPTI_SYNC_TYPE of Kineto's "cuda_sync_kind".
std::int64_t syncTypeOf(std::string_view kind);

// Kineto memcpy names: "Memcpy HtoD (Pageable -> Device)".
struct MemcpyKinds {
  std::int64_t copy = 0, src = 0, dst = 0;
};
MemcpyKinds memcpyKindsOf(std::string_view name);
// ENUM_CUDA_MEM_KIND of a memset's name: "Memset (Device)".
std::int64_t memsetKindOf(std::string_view name);

}  // namespace rlscope::import::kineto
