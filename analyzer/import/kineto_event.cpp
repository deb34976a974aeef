#include "kineto_event.h"

#include <array>
#include <unordered_map>

namespace rlscope::import::kineto {

using trace::Category;

namespace {

// The event members the importer reads; kOther for the rest.
enum class Member { kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs, kOther };

// One switch on the length and at most four fixed-size compares per member, instead of a chain
// of string compares: this runs for every member of every event.
Member memberOf(std::string_view key) {
  switch (key.size()) {
    case 2:
      if (key == "ph") return Member::kPh;
      if (key == "ts") return Member::kTs;
      break;
    case 3:
      if (key == "cat") return Member::kCat;
      if (key == "pid") return Member::kPid;
      if (key == "tid") return Member::kTid;
      if (key == "dur") return Member::kDur;
      break;
    case 4:
      if (key == "name") return Member::kName;
      if (key == "args") return Member::kArgs;
      break;
    default:
      break;
  }
  return Member::kOther;
}

}  // namespace

Kind classify(std::string_view ph, std::string_view cat, std::optional<Category>& category) {
  struct Mapping {
    Kind kind;
    std::optional<Category> category;
  };
  // Complete ("X") events by category: one hash lookup per event.
  static const std::unordered_map<std::string_view, Mapping> kComplete = {
      {"cpu_op", {Kind::kCpuInterval, Category::kBackend}},
      {"python_function", {Kind::kCpuInterval, Category::kPython}},
      {"rlscope.simulator", {Kind::kCpuInterval, Category::kSimulator}},
      {"rlscope.native", {Kind::kCpuInterval, Category::kNative}},
      {"rlscope.waiting", {Kind::kCpuInterval, Category::kWaiting}},
      {"rlscope.cuda_api", {Kind::kCpuInterval, Category::kCudaApi}},
      {"user_annotation", {Kind::kOperation, std::nullopt}},
      {"rlscope.phase", {Kind::kPhase, std::nullopt}},
      {"rlscope.nvtx", {Kind::kNvtx, std::nullopt}},
      {"cuda_runtime", {Kind::kRuntime, std::nullopt}},
      {"cuda_driver", {Kind::kDriver, std::nullopt}},
      {"kernel", {Kind::kKernel, std::nullopt}},
      {"gpu_memcpy", {Kind::kMemcpy, std::nullopt}},
      {"gpu_memset", {Kind::kMemset, std::nullopt}},
      {"cuda_sync", {Kind::kSync, std::nullopt}},
  };
  if (ph == "X") {
    auto it = kComplete.find(cat);
    if (it == kComplete.end()) return Kind::kPlain;
    category = it->second.category;
    return it->second.kind;
  }
  if (ph == "M") return Kind::kMetadata;
  // Launch flows: "ac2g" since Kineto named them so, "async_cpu_to_gpu" (or its short name
  // "async_gpu") before. Either way the export writes them again from the correlation ids.
  if ((cat == "ac2g" || cat == "async_cpu_to_gpu" || cat == "async_gpu") &&
      (ph == "s" || ph == "f" || ph == "t"))
    return Kind::kAc2gFlow;
  if (cat == "rlscope.nvtx" && ph == "i") return Kind::kNvtx;
  return Kind::kPlain;
}

bool argsAreTyped(const RawEvent& e) {
  if (e.ph.empty() || e.cat.empty()) return false;
  std::optional<Category> category;
  switch (classify(e.ph, e.cat, category)) {
    case Kind::kKernel:
    case Kind::kMemcpy:
    case Kind::kMemset:
    case Kind::kSync:
      return true;
    case Kind::kRuntime:
    case Kind::kDriver:
    case Kind::kNvtx:
      return e.pid.isInt && e.tid.isInt;
    default:
      return false;
  }
}

void readEvent(od::object obj, RawEvent& e, const Where& where) {
  for (auto field : obj) {
    std::string_view key = rawKey(need(field.key(), where));
    od::value v = need(field.value(), where);
    Member member = memberOf(key);
    if (member == Member::kPh) {
      e.ph = need(v.get_string(), where.field("ph"));
    } else if (member == Member::kCat) {
      e.cat = need(v.get_string(), where.field("cat"));
    } else if (member == Member::kName) {
      if (need(v.type(), where) == od::json_type::string) {
        e.name = need(v.get_string(), where.field("name"));
      } else {
        e.name = rawValue(v, where.field("name"));
      }
    } else if (member == Member::kPid) {
      e.pid = looseIdOf(v, where.field("pid"));
    } else if (member == Member::kTid) {
      e.tid = looseIdOf(v, where.field("tid"));
    } else if (member == Member::kTs) {
      if (need(v.type(), where) != od::json_type::number) {
        fail(where.field("ts"), "expected a number");
      }
      e.tsToken = trimmed(v.raw_json_token());
    } else if (member == Member::kDur) {
      if (need(v.type(), where) != od::json_type::number) {
        fail(where.field("dur"), "expected a number");
      }
      e.durToken = trimmed(v.raw_json_token());
    } else if (member == Member::kArgs) {
      if (need(v.type(), where) != od::json_type::object) {
        fail(where.field("args"), "expected an object");
      }
      if (argsAreTyped(e)) {
        // Kineto writes "cat" (and pid/tid) before "args": read them into columns now rather
        // than keep the text and parse it a second time.
        e.typedArgs = GpuArgs{};
        readTypedArgs(need(v.get_object(), where), e.typedArgs, where);
        e.hasTypedArgs = true;
      } else {
        e.args = trimmed(need(need(v.get_object(), where).raw_json(), where.field("args")));
      }
    } else {
      std::string_view raw = rawValue(v, where.field(key));
      if (key == "id") e.id = raw;
      e.extras.emplace_back(key, raw);
    }
  }
}

void readElement(simdjson::simdjson_result<od::value> element, RawEvent& e, const Where& where) {
  od::value v = need(std::move(element), where);
  if (need(v.type(), where) != od::json_type::object) {
    fail(where, "an event must be a JSON object");
  }
  e.reset();
  readEvent(need(v.get_object(), where), e, where);
}

void readTypedArgs(od::object obj, GpuArgs& a, const Where& where) {
  using I = std::int64_t GpuArgs::*;
  static const std::unordered_map<std::string_view, I> kIntegers = {
      {"device", &GpuArgs::device},
      {"stream", &GpuArgs::stream},
      {"context", &GpuArgs::context},
      {"correlation", &GpuArgs::correlation},
      {"cbid", &GpuArgs::cbid},
      {"cid", &GpuArgs::cbid},  // ROCm: the HIP API id
      {"returnValue", &GpuArgs::returnValue},
      {"registers per thread", &GpuArgs::registers},
      {"shared memory", &GpuArgs::sharedMemory},
      {"static shared memory", &GpuArgs::staticShared},
      {"dynamic shared memory", &GpuArgs::dynamicShared},
      {"local memory per thread", &GpuArgs::localPerThread},
      {"local memory total", &GpuArgs::localTotal},
      {"grid id", &GpuArgs::gridId},
      {"launch type", &GpuArgs::launchType},
      {"cache config", &GpuArgs::cacheConfig},
      {"graph id", &GpuArgs::graphId},
      {"graph node id", &GpuArgs::graphNodeId},
      {"bytes", &GpuArgs::bytes},
      {"value", &GpuArgs::value},
      {"copy kind", &GpuArgs::copyKind},
      {"src kind", &GpuArgs::srcKind},
      {"dst kind", &GpuArgs::dstKind},
      {"src device", &GpuArgs::srcDevice},
      {"dst device", &GpuArgs::dstDevice},
      {"mem kind", &GpuArgs::memKind},
      {"event id", &GpuArgs::eventId},
      {"event sync id", &GpuArgs::eventSyncId},
      {"rlscope operation id", &GpuArgs::operationId},
      {"eventType", &GpuArgs::nvtxEventType},
      {"rangeId", &GpuArgs::rangeId},
      {"category", &GpuArgs::nvtxCategory},
      {"domainId", &GpuArgs::domainId},
      {"endGlobalTid", &GpuArgs::endGlobalTid},
  };
  // The same names by length: a key is compared with the few of its length instead of being
  // hashed (most args keys of a kernel are not among them).
  static const auto kByLength = [] {
    std::array<std::vector<std::pair<std::string_view, I>>, 32> t;
    for (const auto& [name, member] : kIntegers) t.at(name.size()).emplace_back(name, member);
    return t;
  }();
  auto integerMember = [](std::string_view key) -> I {
    if (key.size() >= kByLength.size()) return nullptr;
    for (const auto& [name, member] : kByLength[key.size()]) {
      if (name[0] == key[0] && name == key) return member;
    }
    return nullptr;
  };
  for (auto field : obj) {
    std::string_view key = rawKey(need(field.key(), where.field("args")));
    Where at = where.arg(key);
    od::value v = need(field.value(), at);
    if (I member = key.empty() ? nullptr : integerMember(key)) {
      a.*member = integerOf(v, at);
    } else if (key == "grid" || key == "block") {
      auto& out = key == "grid" ? a.grid : a.block;
      std::size_t i = 0;
      for (auto item : need(v.get_array(), at)) {
        od::value iv = need(std::move(item), at);
        if (i < 3) out[i] = integerOf(iv, at);
        ++i;
      }
    } else if (key == "cuda_sync_kind") {
      a.syncKind = std::string(need(v.get_string(), at));
    } else if (key == "short name") {
      a.shortName = std::string(need(v.get_string(), at));
    } else if (key == "mangled name") {
      a.mangledName = std::string(need(v.get_string(), at));
    } else if (key == "color") {
      a.color = integerOf(v, at);
    } else if (key == "registered") {
      a.registered = need(v.get_bool(), at);
    }
  }
}

std::int64_t syncTypeOf(std::string_view kind) {
  if (kind == "Event Sync") return 1;
  if (kind == "Stream Wait Event") return 2;
  if (kind == "Stream Sync") return 3;
  if (kind == "Context Sync") return 4;
  return 0;
}

namespace {

std::int64_t memKindOf(std::string_view s) {
  static constexpr std::string_view kNames[] = {
      "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static"};
  for (std::size_t i = 0; i < std::size(kNames); ++i) {
    if (s == kNames[i]) return static_cast<std::int64_t>(i);
  }
  return 7;  // Unknown
}

}  // namespace

MemcpyKinds memcpyKindsOf(std::string_view name) {
  static constexpr std::string_view kCopy[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                               "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  MemcpyKinds k;
  auto sp = name.find(' ');
  if (sp == std::string_view::npos) return k;
  auto rest = name.substr(sp + 1);
  auto kindText = rest.substr(0, rest.find(' '));
  for (std::size_t i = 0; i < std::size(kCopy); ++i) {
    if (kindText == kCopy[i]) k.copy = static_cast<std::int64_t>(i);
  }
  auto open = rest.find('('), arrow = rest.find(" -> "), close = rest.rfind(')');
  if (open != std::string_view::npos && arrow != std::string_view::npos &&
      close != std::string_view::npos && open < arrow && arrow < close) {
    k.src = memKindOf(rest.substr(open + 1, arrow - open - 1));
    k.dst = memKindOf(rest.substr(arrow + 4, close - arrow - 4));
  }
  return k;
}
std::int64_t memsetKindOf(std::string_view name) {
  auto open = name.find('('), close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return 7;
  return memKindOf(name.substr(open + 1, close - open - 1));
}

}  // namespace rlscope::import::kineto
