// The clock exchange of rlscope-prof --clock-sync: its datagrams, NTP's arithmetic, the trace's
// record of it, and a server and a client with a skewed clock over loopback (also run under
// ThreadSanitizer: each has a thread of its own).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>

#include "rlscope/clock_sync/clock_exchange.h"
#include "rlscope/clock_sync/clock_sync_session.h"
#include "rlscope/trace/clock_sync.h"

namespace rlscope::clock_sync {
namespace {

using trace::ClockSync;
using trace::ClockSyncBurst;

TEST(ClockExchange, DatagramsRoundTripAndStrangersAreRejected) {
  Request q{.sequence = 7, .sentNs = -12345};
  auto qb = encode(q);
  auto q2 = decodeRequest(qb);
  ASSERT_TRUE(q2);
  EXPECT_EQ(q2->sequence, 7u);
  EXPECT_EQ(q2->sentNs, -12345);

  Reply r{.sequence = 9, .requestSentNs = 1, .receivedNs = 20, .answeredNs = 25, .session = 0xabc};
  auto rb = encode(r);
  auto r2 = decodeReply(rb);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->session, 0xabcu);
  EXPECT_EQ(r2->answeredNs, 25);

  EXPECT_FALSE(decodeReply(qb));                                     // a request is not a reply
  EXPECT_FALSE(decodeRequest(std::span(qb.data(), qb.size() - 1)));  // short
  auto bad = rb;
  bad[0] = std::byte{'X'};
  EXPECT_FALSE(decodeReply(bad));  // another protocol on the port
  r.answeredNs = 19;               // answered before it was received
  EXPECT_FALSE(decodeReply(encode(r)));
}

// NTP: t0 = 1000 (local), the reference 5000 ahead; 300 ns out, 100 ns in the reference, 500 ns
// back. offset = ((t1 - t0) + (t2 - t3)) / 2 = 5000 + (300 - 500) / 2; delay = 800.
TEST(ClockExchange, OffsetAndDelayAreNtps) {
  Exchange e{.reply = {.requestSentNs = 1000, .receivedNs = 6300, .answeredNs = 6400},
             .returnedNs = 1900};
  EXPECT_EQ(e.offsetNs(), 4900);
  EXPECT_EQ(e.delayNs(), 800);
  // The truth (5000) is within offset ± delay / 2, whatever the asymmetry.
  EXPECT_LE(std::abs(e.offsetNs() - 5000), e.delayNs() / 2);

  std::vector<Exchange> burst = {e, e, e};
  burst[1].returnedNs = 1500;  // the quickest: offset 5100, delay 400
  auto best = bestOf(burst);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->delayNs, 400);
  EXPECT_EQ(best->offsetNs, 5100);
  EXPECT_FALSE(bestOf({}));
}

TEST(ClockExchange, TheBoundCoversBurstsThatDisagree) {
  ClockSync s;
  EXPECT_FALSE(estimate(s));
  s.bursts = {{.atNs = 0, .offsetNs = 1000, .delayNs = 200},
              {.atNs = 5, .offsetNs = 1050, .delayNs = 100},
              {.atNs = 9, .offsetNs = 1080, .delayNs = 300}};
  ASSERT_TRUE(estimate(s));
  EXPECT_EQ(s.offsetNs, 1050);  // the tightest burst
  EXPECT_EQ(s.boundNs, 50);     // the others' intervals overlap its own
  // A burst far outside (the clocks drifted 10 µs apart): the bound widens to reach it.
  s.bursts.push_back({.atNs = 20, .offsetNs = 11050, .delayNs = 200});
  ASSERT_TRUE(estimate(s));
  EXPECT_EQ(s.offsetNs, 1050);
  EXPECT_EQ(s.boundNs, 50 + (10000 - 100 - 50));
}

TEST(ClockExchange, TheTraceRecordSurvivesJsonAndBadOnesAreRefused) {
  ClockSync s{.role = ClockSync::Role::kMeasured,
              .endpoint = "node0:29600",
              .session = "00000000deadbeef",
              .offsetNs = -5'000'123,
              .boundNs = 21'000,
              .exchanges = 32,
              .bursts = {{.atNs = 1, .offsetNs = -5'000'123, .delayNs = 42'000}}};
  auto back = trace::clockSyncFromJson(trace::clockSyncToJson(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->role, ClockSync::Role::kMeasured);
  EXPECT_EQ(back->session, s.session);
  EXPECT_EQ(back->offsetNs, s.offsetNs);
  EXPECT_EQ(back->boundNs, s.boundNs);
  ASSERT_EQ(back->bursts.size(), 1u);
  EXPECT_EQ(back->bursts[0].delayNs, 42'000);
  std::string why;
  EXPECT_FALSE(trace::clockSyncFromJson("[1]", &why));
  EXPECT_FALSE(trace::clockSyncFromJson(R"({"role":"boss"})", &why));
  EXPECT_NE(why.find("role"), std::string::npos);
  EXPECT_FALSE(trace::clockSyncFromJson("{", &why));
}

TEST(ClockExchange, EndpointsAreHostAndPort) {
  EXPECT_EQ(parseEndpoint("node0:29600").host, "node0");
  EXPECT_EQ(parseEndpoint("[::1]:29600").host, "::1");
  EXPECT_EQ(parseEndpoint("[::1]:29600").text(), "[::1]:29600");
  for (const char* bad : {"node0", ":29600", "node0:", "node0:0", "node0:70000", "node0:29x"})
    EXPECT_THROW(parseEndpoint(bad), std::invalid_argument) << bad;
}

// A free UDP port on loopback (the kernel's pick, released for the test to bind).
std::string freeEndpoint() {
  auto s = UdpSocket::bind({"127.0.0.1", "0"});
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(s->fd(), reinterpret_cast<sockaddr*>(&a), &len);
  return "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}

// Two "hosts" on loopback: the second one's clock 5 ms (and 123 ns) behind. The measured
// offset is the truth within the bound the exchanges give, and the bound is a round trip.
TEST(ClockSyncSession, TheSecondSessionMeasuresItsSkewAgainstTheFirst) {
  constexpr std::int64_t kBehind = 5'000'123;
  auto endpoint = freeEndpoint();
  ClockSyncSession reference(endpoint);
  ASSERT_TRUE(reference.serves());
  ClockSyncSession measured(endpoint, [] { return monotonicNs() - kBehind; },
                            {.exchangesPerBurst = 8, .period = std::chrono::milliseconds(20)});
  EXPECT_FALSE(measured.serves());  // the port is taken here: the first one serves it
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto m = measured.finish();
  auto r = reference.finish();
  EXPECT_EQ(r.role, ClockSync::Role::kReference);
  EXPECT_GE(r.exchanges, m.exchanges);
  ASSERT_EQ(m.role, ClockSync::Role::kMeasured);
  ASSERT_GE(m.bursts.size(), 2u);  // the thread's bursts and finish()'s
  EXPECT_EQ(m.session, r.session);
  EXPECT_EQ(m.endpoint, endpoint);
  EXPECT_LE(std::abs(m.offsetNs - kBehind), m.boundNs);
  EXPECT_LT(m.boundNs, 2'000'000) << "a loopback round trip of milliseconds";
  EXPECT_NE(describe(m).find("within"), std::string::npos);
}

TEST(ClockSyncSession, WithoutAReferenceTheRunSaysSoAndGoesOn) {
  auto endpoint = freeEndpoint();
  auto socket = UdpSocket::connect(parseEndpoint(endpoint));
  ClockClient client(
      std::move(socket), monotonicNs,
      {.replyTimeout = std::chrono::milliseconds(20), .firstWait = std::chrono::milliseconds(50)});
  auto started = std::chrono::steady_clock::now();
  auto s = client.finish();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_TRUE(s.bursts.empty());
  EXPECT_TRUE(s.session.empty());
  EXPECT_NE(describe(s).find("no answer"), std::string::npos);
}

TEST(ClockSyncSession, AnUnknownHostIsOneLine) {
  try {
    ClockSyncSession s("no-such-host.invalid:29600");
    FAIL() << "served or measured an unknown host";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-host.invalid"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rlscope::clock_sync
