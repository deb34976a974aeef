// CUPTI activity records → part records (format.h). The testable core of the CUDA collector: no
// CUPTI calls except the (replaceable) API-name lookup, so tests feed it fabricated records.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rlscope/part/format.h"

namespace rlscope::cupti {

// The name of a runtime or driver API by CUPTI callback id ("cudaLaunchKernel", "cuLaunchKernel");
// empty when unknown.
using ApiNamer = std::function<std::string(part::ApiKind kind, std::uint32_t cbid)>;

// CUPTI's own names (cuptiGetCallbackName), with the runtime's version suffix removed:
// "cudaLaunchKernel_v7000" → "cudaLaunchKernel". Driver names are the exported symbols
// ("cuMemcpyHtoD_v2") and are kept as they are.
std::string cuptiApiName(part::ApiKind kind, std::uint32_t cbid);
// "cudaMemcpy_v3020" → "cudaMemcpy"; other text unchanged.
std::string stripRuntimeVersionSuffix(std::string_view name);

// Device id of a synchronization record whose context was never seen.
inline constexpr std::uint32_t kUnknownDevice = 0xffffffffu;

class ActivityDecoder {
 public:
  explicit ActivityDecoder(ApiNamer namer = cuptiApiName);

  // Appends the part records for one CUPTI record to `out`. Returns false, and counts the record,
  // for kinds it does not decode and for records CUPTI left incomplete (no timestamps).
  bool decode(const CUpti_Activity* record, std::vector<std::byte>& out);

  // Synchronization records carry a context but no device: the context-created callback and
  // every kernel/copy/memset record say which device a context belongs to. Thread-safe.
  void noteContextDevice(std::uint32_t contextId, std::uint32_t deviceId);
  std::uint32_t deviceOfContext(std::uint32_t contextId) const;

  std::uint64_t decoded() const { return decoded_; }
  std::uint64_t unknownKinds() const { return unknownKinds_; }
  std::uint64_t incomplete() const { return incomplete_; }

 private:
  const std::string& apiName(part::ApiKind kind, std::uint32_t cbid);

  ApiNamer namer_;
  std::unordered_map<std::uint64_t, std::string> apiNames_;  // (kind << 32 | cbid) → name
  mutable std::mutex contextMutex_;
  std::unordered_map<std::uint32_t, std::uint32_t> contextDevice_;
  std::uint64_t decoded_ = 0;
  std::uint64_t unknownKinds_ = 0;
  std::uint64_t incomplete_ = 0;
};

}  // namespace rlscope::cupti
