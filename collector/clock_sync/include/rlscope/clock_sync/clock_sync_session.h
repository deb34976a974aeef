// `rlscope-prof --clock-sync HOST:PORT`: every node of a job is given the same address, one of
// its hosts' (as torchrun's --master-addr). The rlscope-prof that can bind it serves the job's
// reference clock; every other one measures its clock against it while its run goes on. What
// each learnt goes into its trace (trace::ClockSync), for `rlscope merge`.
#pragma once

#include <memory>
#include <string>

#include "rlscope/clock_sync/clock_client.h"
#include "rlscope/clock_sync/clock_server.h"

namespace rlscope::clock_sync {

class ClockSyncSession {
 public:
  // Serves when HOST is this host's address and the port is free here, else measures against
  // it. Throws std::invalid_argument / std::runtime_error with one line (a malformed endpoint,
  // an unknown host, a port that cannot be bound).
  explicit ClockSyncSession(const std::string& endpoint, Clock clock = monotonicNs,
                            ClientOptions options = {});
  ~ClockSyncSession();

  bool serves() const { return server_ != nullptr; }
  const Endpoint& endpoint() const { return endpoint_; }

  // The run is over: what goes into the trace (the client's last burst runs now).
  trace::ClockSync finish();

 private:
  Endpoint endpoint_;
  std::unique_ptr<ClockServer> server_;
  std::unique_ptr<ClockClient> client_;
};

// One line for rlscope-prof's output: what the session did.
std::string describe(const trace::ClockSync& s);

}  // namespace rlscope::clock_sync
