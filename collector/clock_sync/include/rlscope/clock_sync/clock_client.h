// Measures this host's clock against the job's reference (ClockServer on another host): a
// burst of exchanges as the run starts (waiting for the reference to come up), one every
// `period` while it runs, and one at finish(), on a thread of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "rlscope/clock_sync/clock_exchange.h"
#include "rlscope/clock_sync/udp_socket.h"
#include "rlscope/trace/clock_sync.h"

namespace rlscope::clock_sync {

struct ClientOptions {
  int exchangesPerBurst = 16;
  std::chrono::milliseconds period{5000};       // between bursts while the run goes on
  std::chrono::milliseconds replyTimeout{200};  // a request unanswered this long is lost
  std::chrono::milliseconds firstWait{30000};   // how long the first burst waits for the reference
};

class ClockClient {
 public:
  ClockClient(UdpSocket socket, Clock clock, ClientOptions options = {});
  ~ClockClient();
  ClockClient(const ClockClient&) = delete;
  ClockClient& operator=(const ClockClient&) = delete;

  // Stops the thread, runs a last burst (the reference may be gone: it waits one reply timeout
  // then) and returns what was measured: role kMeasured with offsetNs and boundNs set, or no
  // bursts at all when the reference never answered.
  trace::ClockSync finish();

 private:
  void run();
  void stopThread();
  // One burst, its best exchange kept; false when no reply came. The thread's bursts give up
  // early when stopped; finish()'s does not.
  bool burst(std::chrono::milliseconds waitForFirst, bool stoppable);
  std::optional<Exchange> exchange(std::chrono::milliseconds timeout);

  UdpSocket socket_;
  Clock clock_;
  ClientOptions options_;
  std::uint64_t sequence_ = 0;  // the socket and this: the thread's until it is joined
  std::atomic<bool> stop_{false};
  std::mutex mutex_;  // guards what follows; held briefly, never across the network
  std::condition_variable wake_;
  std::vector<trace::ClockSyncBurst> bursts_;
  std::int64_t exchanges_ = 0;
  std::uint64_t session_ = 0;
  std::thread thread_;
};

}  // namespace rlscope::clock_sync
