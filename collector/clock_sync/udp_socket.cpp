#include "rlscope/clock_sync/udp_socket.h"

#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace rlscope::clock_sync {

namespace {

struct AddrInfoFree {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using AddrInfo = std::unique_ptr<addrinfo, AddrInfoFree>;

AddrInfo resolve(const Endpoint& e, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* out = nullptr;
  int rc = getaddrinfo(e.host.c_str(), e.port.c_str(), &hints, &out);
  if (rc != 0) throw std::runtime_error("cannot resolve " + e.text() + ": " + gai_strerror(rc));
  return AddrInfo(out);
}

UdpSocket openFor(const addrinfo& a) {
  UdpSocket s(::socket(a.ai_family, a.ai_socktype | SOCK_CLOEXEC, a.ai_protocol));
  if (s.fd() < 0)
    throw std::runtime_error(std::string("cannot open a UDP socket: ") + std::strerror(errno));
  return s;
}

}  // namespace

std::string Endpoint::text() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

Endpoint parseEndpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw std::invalid_argument("'" + text + "' is not HOST:PORT");
  Endpoint e{text.substr(0, colon), text.substr(colon + 1)};
  if (e.host.front() == '[' && e.host.back() == ']') e.host = e.host.substr(1, e.host.size() - 2);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(e.port.data(), e.port.data() + e.port.size(), port);
  if (ec != std::errc() || end != e.port.data() + e.port.size() || port == 0 || port > 65535)
    throw std::invalid_argument("'" + text + "': the port is not a number from 1 to 65535");
  if (e.host.empty()) throw std::invalid_argument("'" + text + "' has no host");
  return e;
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

UdpSocket& UdpSocket::operator=(UdpSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

std::optional<UdpSocket> UdpSocket::bind(const Endpoint& e) {
  auto list = resolve(e, true);
  int lastError = EADDRNOTAVAIL;
  for (addrinfo* a = list.get(); a; a = a->ai_next) {
    UdpSocket s = openFor(*a);
    if (::bind(s.fd_, a->ai_addr, a->ai_addrlen) == 0) return s;
    lastError = errno;
    if (lastError != EADDRNOTAVAIL && lastError != EADDRINUSE)
      throw std::runtime_error("cannot serve the clock on " + e.text() + ": " +
                               std::strerror(lastError));
  }
  errno = lastError;
  return std::nullopt;
}

UdpSocket UdpSocket::connect(const Endpoint& e) {
  auto list = resolve(e, false);
  int lastError = 0;
  for (addrinfo* a = list.get(); a; a = a->ai_next) {
    UdpSocket s = openFor(*a);
    if (::connect(s.fd_, a->ai_addr, a->ai_addrlen) == 0) return s;
    lastError = errno;
  }
  throw std::runtime_error("cannot reach " + e.text() + ": " + std::strerror(lastError));
}

std::optional<std::size_t> UdpSocket::receive(std::span<std::byte> into,
                                              std::chrono::milliseconds timeout,
                                              sockaddr_storage* from, socklen_t* fromLen) {
  pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
  int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (ready <= 0) return std::nullopt;
  ssize_t n = from ? ::recvfrom(fd_, into.data(), into.size(), MSG_TRUNC,
                                reinterpret_cast<sockaddr*>(from), fromLen)
                   : ::recv(fd_, into.data(), into.size(), MSG_TRUNC);
  // An error (a refused earlier send shows here on a connected socket) counts as nothing yet.
  if (n < 0) return std::size_t{0};
  return static_cast<std::size_t>(n);
}

}  // namespace rlscope::clock_sync
