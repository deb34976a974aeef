// The collector as NVTX's tool: NVTX_INJECTION64_PATH names this library, and the NVTX instance
// of every library in the process calls InitializeInjectionNvtx2 on its first use; we fill its
// function tables with the handlers below. No CUPTI involved, so NVTX works without a GPU.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstring>
#include <string>

#include "collector_state.h"

namespace rlscope::collector {
namespace {

using part::RecordType;

// Domain and registered-string handles are our own ids, disguised as the opaque NVTX pointers.
std::atomic<std::uint64_t> g_nextHandle{1};
std::atomic<std::uint64_t> g_nextRangeId{1};

std::uint64_t handleId(const void* h) {
  return reinterpret_cast<std::uintptr_t>(h);
}
template <class H>
H handleOf(std::uint64_t id) {
  return reinterpret_cast<H>(static_cast<std::uintptr_t>(id));
}

// NVTX's wide-string variants, kept as UTF-8 whatever the program's locale (wchar_t is UTF-32
// on Linux); invalid code points become U+FFFD.
std::string narrow(const wchar_t* w) {
  std::string out;
  if (!w) return out;
  for (; *w; ++w) {
    auto c = static_cast<std::uint32_t>(*w);
    if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) c = 0xfffd;
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xc0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xe0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (c & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  return out;
}

std::string_view view(const char* s) {
  return s ? std::string_view(s) : std::string_view();
}

// An Ex event's attributes as a part record; `text` keeps converted wide strings alive.
part::NvtxEvent eventOf(std::uint64_t domain, const nvtxEventAttributes_t* a, std::string& text,
                        std::string_view& message) {
  part::NvtxEvent e{};
  e.time = now();
  e.domain = domain;
  message = {};
  if (!a) return e;
  e.category = a->category;
  if (a->colorType == NVTX_COLOR_ARGB) {
    e.hasColor = 1;
    e.color = a->color;
  }
  e.payloadType = static_cast<std::uint8_t>(a->payloadType);
  std::memcpy(&e.payload, &a->payload, sizeof e.payload);
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      message = view(a->message.ascii);
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      text = narrow(a->message.unicode);
      message = text;
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      e.stringHandle = handleId(a->message.registered);
      break;
    default:
      break;
  }
  return e;
}

// --- push / pop: the hot path ---

int pushA(const char* message) {
  ThreadBuffer* b = threadBuffer();
  if (!b) return -1;
  std::uint32_t index = b->nextPushIndex();
  record(b, RecordType::kRangePushA, part::Instant{now()}, {view(message)});
  if (auto* h = cudaHooks(); h && h->pushOperation)
    h->pushOperation(operationIdOf(b->tid(), index));
  return b->enter();
}

int pushEvent(std::uint64_t domain, const nvtxEventAttributes_t* a) {
  ThreadBuffer* b = threadBuffer();
  if (!b) return -1;
  std::uint32_t index = b->nextPushIndex();
  std::string text;
  std::string_view message;
  part::NvtxEvent e = eventOf(domain, a, text, message);
  record(b, RecordType::kRangePush, e, {message});
  if (auto* h = cudaHooks(); h && h->pushOperation)
    h->pushOperation(operationIdOf(b->tid(), index));
  return b->enter();
}

int pop(std::uint64_t domain) {
  ThreadBuffer* b = threadBuffer();
  if (!b) return -1;
  record(b, RecordType::kRangePop, part::NvtxPop{now(), domain});
  if (auto* h = cudaHooks(); h && h->popOperation) h->popOperation();
  return b->leave();
}

int NVTX_API rangePushA(const char* message) {
  return pushA(message);
}
int NVTX_API rangePushW(const wchar_t* message) {
  std::string text = narrow(message);
  return pushA(text.c_str());
}
int NVTX_API rangePushEx(const nvtxEventAttributes_t* a) {
  return pushEvent(0, a);
}
int NVTX_API domainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return pushEvent(handleId(d), a);
}
int NVTX_API rangePop() {
  return pop(0);
}
int NVTX_API domainRangePop(nvtxDomainHandle_t d) {
  return pop(handleId(d));
}

// --- start / end ranges and marks ---

nvtxRangeId_t startEvent(std::uint64_t domain, const nvtxEventAttributes_t* a,
                         std::string_view plainMessage = {}) {
  ThreadBuffer* b = threadBuffer();
  if (!b) return 0;
  std::string text;
  std::string_view message;
  part::NvtxEvent e = eventOf(domain, a, text, message);
  if (!a) message = plainMessage;
  e.rangeId = g_nextRangeId.fetch_add(1, std::memory_order_relaxed);
  record(b, RecordType::kRangeStart, e, {message});
  return e.rangeId;
}

void endRange(nvtxRangeId_t id) {
  ThreadBuffer* b = threadBuffer();
  if (!b) return;
  record(b, RecordType::kRangeEnd, part::NvtxRangeEnd{now(), id});
}

void markEvent(std::uint64_t domain, const nvtxEventAttributes_t* a,
               std::string_view plainMessage = {}) {
  ThreadBuffer* b = threadBuffer();
  if (!b) return;
  std::string text;
  std::string_view message;
  part::NvtxEvent e = eventOf(domain, a, text, message);
  if (!a) message = plainMessage;
  record(b, RecordType::kMark, e, {message});
}

nvtxRangeId_t NVTX_API rangeStartA(const char* m) {
  return startEvent(0, nullptr, view(m));
}
nvtxRangeId_t NVTX_API rangeStartW(const wchar_t* m) {
  std::string text = narrow(m);
  return startEvent(0, nullptr, text);
}
nvtxRangeId_t NVTX_API rangeStartEx(const nvtxEventAttributes_t* a) {
  return startEvent(0, a);
}
nvtxRangeId_t NVTX_API domainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return startEvent(handleId(d), a);
}
void NVTX_API rangeEnd(nvtxRangeId_t id) {
  endRange(id);
}
void NVTX_API domainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) {
  endRange(id);
}
void NVTX_API markA(const char* m) {
  markEvent(0, nullptr, view(m));
}
void NVTX_API markW(const wchar_t* m) {
  std::string text = narrow(m);
  markEvent(0, nullptr, text);
}
void NVTX_API markEx(const nvtxEventAttributes_t* a) {
  markEvent(0, a);
}
void NVTX_API domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  markEvent(handleId(d), a);
}

// --- naming ---

void handleName(RecordType type, std::uint64_t domain, std::uint64_t handle,
                std::string_view name) {
  recordName(type, part::NvtxHandleName{domain, handle}, {name});
}

void NVTX_API nameCategoryA(uint32_t category, const char* name) {
  handleName(RecordType::kNameCategory, 0, category, view(name));
}
void NVTX_API nameCategoryW(uint32_t category, const wchar_t* name) {
  handleName(RecordType::kNameCategory, 0, category, narrow(name));
}
void NVTX_API domainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char* name) {
  handleName(RecordType::kNameCategory, handleId(d), category, view(name));
}
void NVTX_API domainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
  handleName(RecordType::kNameCategory, handleId(d), category, narrow(name));
}
void NVTX_API nameOsThreadA(uint32_t tid, const char* name) {
  ThreadBuffer* b = threadBuffer();
  if (b) record(b, RecordType::kThreadName, part::ThreadName{tid, 1}, {view(name)});
}
void NVTX_API nameOsThreadW(uint32_t tid, const wchar_t* name) {
  std::string text = narrow(name);
  nameOsThreadA(tid, text.c_str());
}

nvtxDomainHandle_t domainCreate(std::string_view name) {
  std::uint64_t id = g_nextHandle.fetch_add(1, std::memory_order_relaxed);
  handleName(RecordType::kDomainCreate, id, id, name);
  return handleOf<nvtxDomainHandle_t>(id);
}
nvtxDomainHandle_t NVTX_API domainCreateA(const char* name) {
  return domainCreate(view(name));
}
nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t* name) {
  return domainCreate(narrow(name));
}
void NVTX_API domainDestroy(nvtxDomainHandle_t) {}

nvtxStringHandle_t registerString(nvtxDomainHandle_t d, std::string_view s) {
  std::uint64_t id = g_nextHandle.fetch_add(1, std::memory_order_relaxed);
  handleName(RecordType::kRegisterString, handleId(d), id, s);
  return handleOf<nvtxStringHandle_t>(id);
}
nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t d, const char* s) {
  return registerString(d, view(s));
}
nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t d, const wchar_t* s) {
  return registerString(d, narrow(s));
}

// Resources (naming of mutexes and the like) carry nothing rlscope uses; a valid handle is
// returned so callers can destroy it.
nvtxResourceHandle_t NVTX_API domainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) {
  return handleOf<nvtxResourceHandle_t>(g_nextHandle.fetch_add(1, std::memory_order_relaxed));
}
void NVTX_API domainResourceDestroy(nvtxResourceHandle_t) {}
void NVTX_API initialize(const void*) {}

template <class F>
void install(NvtxFunctionTable table, unsigned size, unsigned id, F* fn) {
  if (id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

bool installCore(const NvtxExportTableCallbacks* cb) {
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t) return false;
  install(t, n, NVTX_CBID_CORE_MarkEx, markEx);
  install(t, n, NVTX_CBID_CORE_MarkA, markA);
  install(t, n, NVTX_CBID_CORE_MarkW, markW);
  install(t, n, NVTX_CBID_CORE_RangeStartEx, rangeStartEx);
  install(t, n, NVTX_CBID_CORE_RangeStartA, rangeStartA);
  install(t, n, NVTX_CBID_CORE_RangeStartW, rangeStartW);
  install(t, n, NVTX_CBID_CORE_RangeEnd, rangeEnd);
  install(t, n, NVTX_CBID_CORE_RangePushEx, rangePushEx);
  install(t, n, NVTX_CBID_CORE_RangePushA, rangePushA);
  install(t, n, NVTX_CBID_CORE_RangePushW, rangePushW);
  install(t, n, NVTX_CBID_CORE_RangePop, rangePop);
  install(t, n, NVTX_CBID_CORE_NameCategoryA, nameCategoryA);
  install(t, n, NVTX_CBID_CORE_NameCategoryW, nameCategoryW);
  install(t, n, NVTX_CBID_CORE_NameOsThreadA, nameOsThreadA);
  install(t, n, NVTX_CBID_CORE_NameOsThreadW, nameOsThreadW);
  return true;
}

bool installCore2(const NvtxExportTableCallbacks* cb) {
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || !t) return false;
  install(t, n, NVTX_CBID_CORE2_DomainMarkEx, domainMarkEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, domainRangeStartEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangeEnd, domainRangeEnd);
  install(t, n, NVTX_CBID_CORE2_DomainRangePushEx, domainRangePushEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangePop, domainRangePop);
  install(t, n, NVTX_CBID_CORE2_DomainResourceCreate, domainResourceCreate);
  install(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, domainResourceDestroy);
  install(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, domainNameCategoryA);
  install(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, domainNameCategoryW);
  install(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, domainRegisterStringA);
  install(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, domainRegisterStringW);
  install(t, n, NVTX_CBID_CORE2_DomainCreateA, domainCreateA);
  install(t, n, NVTX_CBID_CORE2_DomainCreateW, domainCreateW);
  install(t, n, NVTX_CBID_CORE2_DomainDestroy, domainDestroy);
  install(t, n, NVTX_CBID_CORE2_Initialize, initialize);
  return true;
}

}  // namespace
}  // namespace rlscope::collector

// NVTX's entry point for a tool. Returning 0 leaves NVTX a no-op in that library: what happens
// when the collector is inactive (loaded outside rlscope-prof) or rlscope-prof ran with --no-nvtx.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t getExportTable) {
  using namespace rlscope::collector;
  if (!active() || !(features() & rlscope::part::kFeatureNvtx) || !getExportTable) return 0;
  auto* cb = static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
  if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  if (!installCore(cb) || !installCore2(cb)) return 0;
  return 1;
}
