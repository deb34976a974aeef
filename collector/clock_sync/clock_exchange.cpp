#include "rlscope/clock_sync/clock_exchange.h"

#include <endian.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace rlscope::clock_sync {

namespace {

constexpr std::array<char, 8> kRequestMagic = {'R', 'L', 'S', 'C', 'L', 'K', 'Q', '1'};
constexpr std::array<char, 8> kReplyMagic = {'R', 'L', 'S', 'C', 'L', 'K', 'A', '1'};

// Little-endian 8-byte fields after an 8-byte magic.
template <std::size_t N>
class Writer {
 public:
  explicit Writer(const std::array<char, 8>& magic) { std::memcpy(bytes.data(), magic.data(), 8); }
  Writer& put(std::uint64_t v) {
    v = htole64(v);
    std::memcpy(bytes.data() + at_, &v, 8);
    at_ += 8;
    return *this;
  }
  std::array<std::byte, N> bytes{};

 private:
  std::size_t at_ = 8;
};

class Fields {
 public:
  Fields(std::span<const std::byte> d, std::size_t size, const std::array<char, 8>& magic)
      : d_(d), ok_(d.size() == size && std::memcmp(d.data(), magic.data(), 8) == 0) {}
  bool ok() const { return ok_; }
  std::uint64_t next() {
    std::uint64_t v;
    std::memcpy(&v, d_.data() + at_, 8);
    at_ += 8;
    return le64toh(v);
  }

 private:
  std::span<const std::byte> d_;
  bool ok_;
  std::size_t at_ = 8;
};

}  // namespace

std::int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string sessionText(std::uint64_t session) {
  char id[17];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(session));
  return id;
}

std::array<std::byte, kRequestBytes> encode(const Request& r) {
  return Writer<kRequestBytes>(kRequestMagic)
      .put(r.sequence)
      .put(static_cast<std::uint64_t>(r.sentNs))
      .bytes;
}

std::array<std::byte, kReplyBytes> encode(const Reply& r) {
  return Writer<kReplyBytes>(kReplyMagic)
      .put(r.sequence)
      .put(static_cast<std::uint64_t>(r.requestSentNs))
      .put(static_cast<std::uint64_t>(r.receivedNs))
      .put(static_cast<std::uint64_t>(r.answeredNs))
      .put(r.session)
      .bytes;
}

std::optional<Request> decodeRequest(std::span<const std::byte> datagram) {
  Fields f(datagram, kRequestBytes, kRequestMagic);
  if (!f.ok()) return std::nullopt;
  Request r;
  r.sequence = f.next();
  r.sentNs = static_cast<std::int64_t>(f.next());
  return r;
}

std::optional<Reply> decodeReply(std::span<const std::byte> datagram) {
  Fields f(datagram, kReplyBytes, kReplyMagic);
  if (!f.ok()) return std::nullopt;
  Reply r;
  r.sequence = f.next();
  r.requestSentNs = static_cast<std::int64_t>(f.next());
  r.receivedNs = static_cast<std::int64_t>(f.next());
  r.answeredNs = static_cast<std::int64_t>(f.next());
  r.session = f.next();
  // The reference cannot answer before it received.
  if (r.answeredNs < r.receivedNs) return std::nullopt;
  return r;
}

std::int64_t Exchange::offsetNs() const {
  return ((reply.receivedNs - reply.requestSentNs) + (reply.answeredNs - returnedNs)) / 2;
}

std::int64_t Exchange::delayNs() const {
  return (returnedNs - reply.requestSentNs) - (reply.answeredNs - reply.receivedNs);
}

std::optional<trace::ClockSyncBurst> bestOf(std::span<const Exchange> burst) {
  const Exchange* best = nullptr;
  for (const auto& e : burst) {
    if (e.delayNs() < 0) continue;  // the local clock went backwards: not CLOCK_MONOTONIC
    if (!best || e.delayNs() < best->delayNs()) best = &e;
  }
  if (!best) return std::nullopt;
  return trace::ClockSyncBurst{
      .atNs = best->reply.requestSentNs + (best->returnedNs - best->reply.requestSentNs) / 2,
      .offsetNs = best->offsetNs(),
      .delayNs = best->delayNs()};
}

bool estimate(trace::ClockSync& s) {
  if (s.bursts.empty()) return false;
  const auto& best =
      *std::min_element(s.bursts.begin(), s.bursts.end(),
                        [](const auto& a, const auto& b) { return a.delayNs < b.delayNs; });
  std::int64_t half = best.delayNs / 2, outside = 0;
  // Each burst says the offset was within its own offset ± delay / 2 then; how far that
  // interval lies from the best one's is drift (or a clock step) the bound has to cover.
  for (const auto& b : s.bursts) {
    std::int64_t gap =
        (b.offsetNs > best.offsetNs ? b.offsetNs - best.offsetNs : best.offsetNs - b.offsetNs) -
        b.delayNs / 2 - half;
    outside = std::max(outside, gap);
  }
  s.offsetNs = best.offsetNs;
  s.boundNs = half + outside;
  return true;
}

}  // namespace rlscope::clock_sync
