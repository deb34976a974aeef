// The job's reference clock: answers every clock request that reaches its UDP socket, on a
// thread of its own, until it is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "rlscope/clock_sync/clock_exchange.h"
#include "rlscope/clock_sync/udp_socket.h"

namespace rlscope::clock_sync {

class ClockServer {
 public:
  ClockServer(UdpSocket socket, Clock clock);
  ~ClockServer();
  ClockServer(const ClockServer&) = delete;
  ClockServer& operator=(const ClockServer&) = delete;

  // Stops answering (the thread is joined: answered() is final). Also done by the destructor.
  void stop();

  std::uint64_t session() const { return session_; }
  std::int64_t answered() const { return answered_.load(std::memory_order_relaxed); }

 private:
  void serve();

  UdpSocket socket_;
  Clock clock_;
  std::uint64_t session_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> answered_{0};
  std::thread thread_;
};

}  // namespace rlscope::clock_sync
