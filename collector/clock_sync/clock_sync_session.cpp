#include "rlscope/clock_sync/clock_sync_session.h"

#include <cstdio>

namespace rlscope::clock_sync {

ClockSyncSession::ClockSyncSession(const std::string& endpoint, Clock clock, ClientOptions options)
    : endpoint_(parseEndpoint(endpoint)) {
  if (auto socket = UdpSocket::bind(endpoint_)) {
    server_ = std::make_unique<ClockServer>(std::move(*socket), std::move(clock));
  } else {
    client_ =
        std::make_unique<ClockClient>(UdpSocket::connect(endpoint_), std::move(clock), options);
  }
}

ClockSyncSession::~ClockSyncSession() = default;

trace::ClockSync ClockSyncSession::finish() {
  trace::ClockSync s;
  if (server_) {
    server_->stop();
    s.role = trace::ClockSync::Role::kReference;
    s.session = sessionText(server_->session());
    s.exchanges = server_->answered();
    server_.reset();
  } else {
    s = client_->finish();
  }
  s.endpoint = endpoint_.text();
  return s;
}

std::string describe(const trace::ClockSync& s) {
  char line[256];
  if (s.role == trace::ClockSync::Role::kReference) {
    std::snprintf(line, sizeof line,
                  "served the job's reference clock on %s (%lld requests answered)",
                  s.endpoint.c_str(), static_cast<long long>(s.exchanges));
  } else if (s.bursts.empty()) {
    std::snprintf(line, sizeof line,
                  "no answer from the clock reference %s: `rlscope merge` will align this host "
                  "by collectives or wall clock",
                  s.endpoint.c_str());
  } else {
    std::snprintf(line, sizeof line,
                  "clock measured against %s: reference = this host %+.6f ms, within ±%.1f µs "
                  "(%lld exchanges in %zu bursts)",
                  s.endpoint.c_str(), static_cast<double>(s.offsetNs) / 1e6,
                  static_cast<double>(s.boundNs) / 1e3, static_cast<long long>(s.exchanges),
                  s.bursts.size());
  }
  return line;
}

}  // namespace rlscope::clock_sync
