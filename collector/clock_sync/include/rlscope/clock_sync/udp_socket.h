// A UDP socket for the clock exchange: HOST:PORT parsed and resolved, bound (to serve) or
// connected (to ask), closed with its owner.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rlscope::clock_sync {

struct Endpoint {
  std::string host;  // a name or an address; IPv6 addresses in brackets: [::1]:29600
  std::string port;
  std::string text() const;
};

// HOST:PORT (PORT 1-65535); throws std::invalid_argument with one line otherwise.
Endpoint parseEndpoint(const std::string& text);

class UdpSocket {
 public:
  UdpSocket() = default;
  explicit UdpSocket(int fd) : fd_(fd) {}
  ~UdpSocket();
  UdpSocket(UdpSocket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UdpSocket& operator=(UdpSocket&& o) noexcept;

  // Bound to the endpoint's address: nullopt with errno EADDRNOTAVAIL (the address is another
  // host's) or EADDRINUSE (another process serves it here); throws std::runtime_error for
  // anything else (an unknown host name, a port this user may not bind).
  static std::optional<UdpSocket> bind(const Endpoint& e);
  // Connected to the endpoint (throws std::runtime_error when it cannot be resolved).
  static UdpSocket connect(const Endpoint& e);

  int fd() const { return fd_; }
  // Waits up to `timeout` for a datagram; its size, or nullopt on timeout. `from` (optional)
  // receives the sender's address.
  std::optional<std::size_t> receive(std::span<std::byte> into, std::chrono::milliseconds timeout,
                                     sockaddr_storage* from = nullptr,
                                     socklen_t* fromLen = nullptr);

 private:
  int fd_ = -1;
};

}  // namespace rlscope::clock_sync
