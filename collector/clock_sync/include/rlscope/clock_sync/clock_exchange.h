// The clock exchange between the rlscope-prof processes of one job's hosts: NTP's four
// timestamps over UDP (RFC 5905, section 8), each host's own CLOCK_MONOTONIC, which the
// collector's times are on. A request carries the sender's time; the reply adds when the
// reference received it and when it answered.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rlscope/trace/clock_sync.h"

namespace rlscope::clock_sync {

// A clock in ns; tests give one with a skew to play another host.
using Clock = std::function<std::int64_t()>;
std::int64_t monotonicNs();

struct Request {
  std::uint64_t sequence = 0;
  std::int64_t sentNs = 0;  // t0, the measured host's clock
};

struct Reply {
  std::uint64_t sequence = 0;
  std::int64_t requestSentNs = 0;  // t0, echoed
  std::int64_t receivedNs = 0;     // t1, the reference's clock
  std::int64_t answeredNs = 0;     // t2, the reference's clock
  std::uint64_t session = 0;       // the reference's id for this run
};

// A session id as the traces keep it (16 hex digits).
std::string sessionText(std::uint64_t session);

inline constexpr std::size_t kRequestBytes = 24;
inline constexpr std::size_t kReplyBytes = 48;
std::array<std::byte, kRequestBytes> encode(const Request& r);
std::array<std::byte, kReplyBytes> encode(const Reply& r);
// nullopt for anything else that reached the port (wrong size or magic).
std::optional<Request> decodeRequest(std::span<const std::byte> datagram);
std::optional<Reply> decodeReply(std::span<const std::byte> datagram);

// One completed exchange: the reply and when it came back (t3, the measured host's clock).
struct Exchange {
  Reply reply;
  std::int64_t returnedNs = 0;
  // reference - local: ((t1 - t0) + (t2 - t3)) / 2
  std::int64_t offsetNs() const;
  // the round trip less the reference's own time: (t3 - t0) - (t2 - t1)
  std::int64_t delayNs() const;
};

// The best exchange of a burst (the shortest round trip), nullopt for none.
std::optional<trace::ClockSyncBurst> bestOf(std::span<const Exchange> burst);

// The offset a run's bursts give: the best burst's (the tightest bound), its bound widened by
// how far any other burst's interval lies outside it (the hosts' clocks drifting apart).
// Sets offsetNs and boundNs of `into` from its bursts; false when it has none.
bool estimate(trace::ClockSync& into);

}  // namespace rlscope::clock_sync
