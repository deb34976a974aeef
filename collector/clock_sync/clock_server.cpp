#include "rlscope/clock_sync/clock_server.h"

#include <sys/socket.h>

#include <random>

namespace rlscope::clock_sync {

namespace {

std::uint64_t newSession() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

}  // namespace

ClockServer::ClockServer(UdpSocket socket, Clock clock)
    : socket_(std::move(socket)),
      clock_(std::move(clock)),
      session_(newSession()),
      thread_([this] { serve(); }) {}

ClockServer::~ClockServer() {
  stop();
}

void ClockServer::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ClockServer::serve() {
  std::array<std::byte, 64> buffer{};
  while (!stop_.load()) {
    sockaddr_storage from{};
    socklen_t fromLen = sizeof from;
    // Short waits, so that the destructor does not wait long for the thread.
    auto n = socket_.receive(buffer, std::chrono::milliseconds(50), &from, &fromLen);
    if (!n) continue;
    std::int64_t received = clock_();
    auto request = decodeRequest(std::span(buffer.data(), std::min(*n, buffer.size())));
    if (!request) continue;
    Reply reply{.sequence = request->sequence,
                .requestSentNs = request->sentNs,
                .receivedNs = received,
                .session = session_};
    reply.answeredNs = clock_();
    auto bytes = encode(reply);
    if (::sendto(socket_.fd(), bytes.data(), bytes.size(), 0,
                 reinterpret_cast<const sockaddr*>(&from),
                 fromLen) == static_cast<ssize_t>(bytes.size()))
      answered_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace rlscope::clock_sync
