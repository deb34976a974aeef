#include "rlscope/clock_sync/clock_client.h"

#include <sys/socket.h>

namespace rlscope::clock_sync {

ClockClient::ClockClient(UdpSocket socket, Clock clock, ClientOptions options)
    : socket_(std::move(socket)),
      clock_(std::move(clock)),
      options_(options),
      thread_([this] { run(); }) {}

ClockClient::~ClockClient() {
  stopThread();
}

void ClockClient::stopThread() {
  {
    std::lock_guard lock(mutex_);  // so that the thread cannot miss the wake-up
    stop_.store(true);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ClockClient::run() {
  auto wait = options_.firstWait;
  while (!stop_.load()) {
    if (burst(wait, true)) wait = options_.replyTimeout;
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, options_.period, [&] { return stop_.load(); });
  }
}

std::optional<Exchange> ClockClient::exchange(std::chrono::milliseconds timeout) {
  Request request{.sequence = ++sequence_, .sentNs = clock_()};
  auto bytes = encode(request);
  if (::send(socket_.fd(), bytes.data(), bytes.size(), 0) < 0) return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::array<std::byte, 64> buffer{};
  // Replies to earlier, timed-out requests may still arrive: skip them.
  for (auto now = std::chrono::steady_clock::now(); now < deadline;
       now = std::chrono::steady_clock::now()) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    auto n = socket_.receive(buffer, left);
    std::int64_t returned = clock_();
    if (!n) return std::nullopt;
    auto reply = decodeReply(std::span(buffer.data(), std::min(*n, buffer.size())));
    if (!reply || reply->sequence != request.sequence || reply->requestSentNs != request.sentNs)
      continue;
    return Exchange{.reply = *reply, .returnedNs = returned};
  }
  return std::nullopt;
}

bool ClockClient::burst(std::chrono::milliseconds waitForFirst, bool stoppable) {
  std::vector<Exchange> got;
  // The reference may not be up yet (nodes start when they start): ask again every reply
  // timeout until it answers or the wait is over, then the rest of the burst.
  auto giveUp = std::chrono::steady_clock::now() + waitForFirst;
  while (got.empty() && !(stoppable && stop_.load())) {
    if (auto e = exchange(options_.replyTimeout)) got.push_back(*e);
    if (std::chrono::steady_clock::now() >= giveUp) break;
  }
  if (got.empty()) return false;
  // Two losses in a row: the reference has gone (its run ended first), or the network is bad.
  for (int i = 1, lost = 0; i < options_.exchangesPerBurst && lost < 2; ++i) {
    auto e = exchange(options_.replyTimeout);
    lost = e ? 0 : lost + 1;
    if (e) got.push_back(*e);
  }
  auto best = bestOf(got);
  if (!best) return false;
  std::lock_guard lock(mutex_);
  std::uint64_t session = got.back().reply.session;
  // A reference that started again is another session: offsets against the old one would not
  // match its trace.
  if (session_ && session != session_) {
    bursts_.clear();
    exchanges_ = 0;
  }
  session_ = session;
  exchanges_ += static_cast<std::int64_t>(got.size());
  bursts_.push_back(*best);
  return true;
}

trace::ClockSync ClockClient::finish() {
  stopThread();
  burst(options_.replyTimeout, false);
  std::lock_guard lock(mutex_);
  trace::ClockSync s{
      .role = trace::ClockSync::Role::kMeasured, .exchanges = exchanges_, .bursts = bursts_};
  if (session_) s.session = sessionText(session_);
  estimate(s);
  return s;
}

}  // namespace rlscope::clock_sync
