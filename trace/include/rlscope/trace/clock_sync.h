// What a host's rlscope-prof learnt of its clock against the job's reference clock
// (`rlscope-prof --clock-sync HOST:PORT`), kept in rlscope_meta.clock_sync as JSON so that
// `rlscope merge` can put the host's events on the reference's clock without collectives
// (docs/user-guide.md "A job on several hosts", docs/trace-format.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlscope::trace {

// One burst of exchanges: its best one (the shortest round trip), which bounds the offset
// tightest (NTP's rule: the true offset lies within offset ± delay / 2).
struct ClockSyncBurst {
  std::int64_t atNs = 0;      // the local clock, mid-exchange
  std::int64_t offsetNs = 0;  // reference clock - local clock
  std::int64_t delayNs = 0;   // round trip less the reference's own time
};

struct ClockSync {
  enum class Role { kReference, kMeasured };
  Role role = Role::kReference;
  std::string endpoint;  // HOST:PORT as given to --clock-sync
  std::string session;   // the reference's id: traces measured against it share it
  // kMeasured only: reference = local + offsetNs, within ± boundNs (the best burst's half
  // round trip, widened by how much the bursts disagree: drift between the hosts' clocks).
  std::int64_t offsetNs = 0;
  std::int64_t boundNs = 0;
  std::int64_t exchanges = 0;  // answered exchanges in all (kReference: requests answered)
  std::vector<ClockSyncBurst> bursts;
};

// The meta key and its JSON: {"role": "reference"|"measured", "endpoint", "session",
// "offset_ns", "bound_ns", "exchanges", "bursts": [{"at_ns", "offset_ns", "delay_ns"}]}.
inline constexpr std::string_view kClockSyncMetaKey = "clock_sync";
std::string clockSyncToJson(const ClockSync& s);
// nullopt, with why in *error, when the text is not such an object (traces are untrusted).
std::optional<ClockSync> clockSyncFromJson(std::string_view text, std::string* error = nullptr);

}  // namespace rlscope::trace
