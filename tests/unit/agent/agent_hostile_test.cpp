// Hostile and unlucky clients against a real `harness agent` process on loopback (raw
// sockets and the httplib client; plain HTTP and TLS): deep or malformed JSON, slow and
// oversized request heads, many connections, refused bodies, a cancel in every state of a
// case, an unclean or unknown restoration, specs aimed at the VM's own services, serialised
// qualification, the executor's pid after it is reaped. Every test is bounded: a fixed
// number of connections and bytes, waits that poll with a deadline and fail loudly.
#include "harness/agent/routes/server.hpp"
#include "tests/unit/agent/agent_fixture.hpp"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <thread>

namespace {

using namespace agent_test;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

/// One connection to the agent from a chosen loopback source address (all of 127/8 is
/// loopback), plain or TLS (the certificate is not checked: these tests are about the
/// transport's limits, not about authenticating the agent).
class Raw {
 public:
  Raw(int port, bool tls, const std::string& source = "127.0.0.1", bool handshake = true) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &src.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) return;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return;
    timeval tv{30, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    timeval hs{10, 0};  // a handshake the agent never answers fails instead of hanging the test
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &hs, sizeof hs);
    if (tls && handshake) {
      ctx_ = SSL_CTX_new(TLS_client_method());
      // A read that finds only TLS records without data (the session tickets the agent
      // sends after the handshake) returns instead of blocking: read_until tells it from a
      // close.
      SSL_CTX_clear_mode(ctx_, SSL_MODE_AUTO_RETRY);
      ssl_ = SSL_new(ctx_);
      SSL_set_fd(ssl_, fd_);
      if (SSL_connect(ssl_) != 1) return;
    }
    ok_ = true;
  }
  ~Raw() {
    if (ssl_) SSL_free(ssl_);
    if (ctx_) SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  bool ok() const { return ok_; }

  /// Sends all of `b`; false once the agent has closed (or reset) the connection.
  bool send(const std::string& b) {
    if (!ok_) return false;
    if (ssl_) return SSL_write(ssl_, b.data(), static_cast<int>(b.size())) > 0;
    std::size_t off = 0;
    while (off < b.size()) {
      const ssize_t n = ::send(fd_, b.data() + off, b.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// Reads into received() until `done()` holds, the agent closes the connection or
  /// `timeout` passes.
  template <typename Done>
  void read_until(Done done, milliseconds timeout) {
    const auto until = Clock::now() + timeout;
    while (!closed_ && !done() && readable(until)) {  // at least one look, even when timeout is 0
      char buf[4096];
      const int n = ssl_ ? SSL_read(ssl_, buf, sizeof buf) : static_cast<int>(::recv(fd_, buf, sizeof buf, 0));
      if (n <= 0 && ssl_ && SSL_get_error(ssl_, n) == SSL_ERROR_WANT_READ) continue;  // no data yet
      if (n <= 0)
        closed_ = true;
      else
        got_.append(buf, static_cast<std::size_t>(n));
    }
  }

  /// Everything the agent sends until it closes the connection or `timeout` passes.
  std::string read_until_closed(milliseconds timeout) {
    read_until([] { return false; }, timeout);
    return got_;
  }

  /// The first line the agent sends within `timeout` ("" when none came).
  std::string status_line(milliseconds timeout) {
    read_until([this] { return got_.find("\r\n") != std::string::npos; }, timeout);
    return got_.substr(0, got_.find("\r\n"));
  }
  const std::string& received() const { return got_; }

  /// True when there is something to read (data or end of stream) right now or before `until`.
  bool readable(Clock::time_point until) {
    if (ssl_ && SSL_pending(ssl_) > 0) return true;
    pollfd p{fd_, POLLIN, 0};
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    return ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left))) > 0;
  }

  /// True when the agent closes the connection within `timeout` (anything it sends first is kept).
  bool closed_within(milliseconds timeout) {
    read_until([] { return false; }, timeout);
    return closed_;
  }

 private:
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool ok_ = false;
  bool closed_ = false;
  std::string got_;
};

/// A number field of /proc/<pid>/status ("VmRSS:", "VmHWM:" in KiB, "Threads:"), 0 when
/// unreadable.
long status_field(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string l; std::getline(in, l);)
    if (l.rfind(field, 0) == 0) return std::stol(l.substr(field.size()));
  return 0;
}

/// /proc/<pid>/status VmRSS, KiB (0 when unreadable).
long rss_kib(pid_t pid) { return status_field(pid, "VmRSS:"); }

/// True when every thread of `pid` sleeps (state S in /proc/<pid>/task/*/stat): a new
/// connection's thread has then taken its slot and waits in poll for the client.
bool all_threads_sleeping(pid_t pid) {
  std::error_code ec;
  for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const std::string stat = test_support::slurp(t.path() / "stat");
    const auto rp = stat.rfind(')');
    if (rp == std::string::npos || rp + 2 >= stat.size() || stat[rp + 2] != 'S') return false;
  }
  return !ec;
}

/// The agent's RSS stays under this through every test of the table (issue 48, item 0).
constexpr long kMaxAgentHwmKib = 32 * 1024;

/// Bytes the process has read with read(2) so far (/proc/<pid>/io rchar). OpenSSL reads
/// its socket with read(2), so over TLS this counts what the agent took off the wire;
/// httplib's plain sockets use recv(2), which rchar does not count.
long long read_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/io");
  for (std::string l; std::getline(in, l);)
    if (l.rfind("rchar:", 0) == 0) return std::stoll(l.substr(6));
  return -1;
}

/// Waits until `pred` holds, polling every 20 ms, at most `timeout`; returns whether it held.
template <typename Pred>
bool eventually(Pred pred, milliseconds timeout = seconds(30)) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return pred();
}

std::string auth_head(const std::string& method, const std::string& path) {
  return method + " " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + std::string(kToken) + "\r\n";
}

/// The agent tests of this file, over plain HTTP and over TLS.
class AgentHostile : public AgentFixture, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    tls = GetParam();
  }

  /// Before the agent is stopped: its peak RSS (VmHWM) over the whole test stayed under
  /// kMaxAgentHwmKib.
  void TearDown() override {
    if (pid > 0) {
      const long hwm = status_field(pid, "VmHWM:");
      RecordProperty("agent_vmhwm_kib", std::to_string(hwm));
      EXPECT_GT(hwm, 0) << "the agent's /proc/" << pid << "/status has no VmHWM";
      EXPECT_LT(hwm, kMaxAgentHwmKib) << "the agent's peak RSS (VmHWM) was " << hwm << " KiB";
    }
    AgentFixture::TearDown();
  }

  /// GET /v1/health from `source`: its status, or 0 when no answer came within `timeout`.
  /// A liveness check, not a timing claim: the bound only keeps a dead agent from hanging
  /// the test (a test that is about health not waiting judges the event it waits for, as
  /// HealthAnswersWhile64SlowClientsAreConnected does).
  int health_status(const std::string& source = "127.0.0.1", milliseconds timeout = seconds(20)) {
    Raw r(port, tls, source);
    if (!r.ok() || !r.send("GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) return 0;
    const std::string line = r.status_line(timeout);
    return line.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(line.substr(9, 3)) : 0;
  }

  /// The state of case `id` as GET /v1/cases/<id> gives it within 2 s ("" otherwise).
  std::string state_within_2s(const std::string& id) {
    auto c = client();
    c.set_read_timeout(2, 0);
    auto r = c.Get(("/v1/cases/" + id).c_str());
    if (!r || r->status != 200) return "";
    const json j = json::parse(r->body, nullptr, false);
    return j.is_object() && j["state"].is_string() ? j["state"].get<std::string>() : "";
  }

  std::string phase_of(const std::string& id) {
    auto r = client().Get(("/v1/cases/" + id).c_str());
    if (!r || r->status != 200) return "";
    const json j = json::parse(r->body, nullptr, false);
    return j.is_object() && j["phase"].is_string() ? j["phase"].get<std::string>() : "";
  }

  /// A bundle for `id` whose restoration row says unclean with `problem`.
  void make_unclean_bundle(const std::string& id, const std::string& problem) {
    make_bundle(id);
    results::Db db((dir / "bundles" / (id + ".db")).string(), results::Db::Mode::ReadWrite);
    results::Stmt st(db, "INSERT INTO restoration(case_id,start_ns,end_ns,clean,detail_json) VALUES(?,1,2,0,?)");
    st.bind(1, id);
    st.bind(2, json{{"verdict", {{"clean", false}, {"problems", {problem}}}}}.dump());
    st.run();
  }

  int post_spec(const json& spec, std::string* body = nullptr) {
    auto r = client().Post("/v1/cases", spec.dump(), "application/json");
    if (!r) return 0;
    if (body) *body = r->body;
    return r->status;
  }

  /// Sends `body` to POST /v1/cases from `n` clients at once (each connected and ready
  /// before the first sends); each answer's status and body (0 and "" when none came).
  std::vector<std::pair<int, std::string>> post_at_once(const std::string& body, int n) {
    std::vector<std::future<std::pair<int, std::string>>> all;
    std::atomic<int> ready{0};
    for (int i = 0; i < n; ++i)
      all.push_back(std::async(std::launch::async, [&] {
        auto c = client();
        ++ready;
        while (ready.load() < n) std::this_thread::yield();
        auto r = c.Post("/v1/cases", body, "application/json");
        return r ? std::make_pair(r->status, r->body) : std::make_pair(0, std::string());
      }));
    std::vector<std::pair<int, std::string>> out;
    for (auto& a : all) out.push_back(a.get());
    return out;
  }
};

// ---- finding 1: deep and malformed JSON ------------------------------------------------

// A 201 KB spec whose `campaign` is an array nested 100,000 deep: refused with a 400 that
// names the limit, before anything copies it (it used to overflow the agent's stack).
TEST_P(AgentHostile, DeepJsonGets400NamingTheDepthLimit) {
  ASSERT_TRUE(start());
  std::string spec = valid_spec("case-deep").dump();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const auto at = spec.find("\"smoke\"");
  ASSERT_NE(at, std::string::npos);
  spec.replace(at, 7, deep);
  std::string body;
  auto r = client().Post("/v1/cases", spec, "application/json");
  ASSERT_TRUE(r) << "no answer: the agent died on a deep document";
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("deeper than 64 levels (limit 64)"), std::string::npos) << r->body;
  EXPECT_EQ(health_status(), 200);
  EXPECT_TRUE(runs().empty());
  EXPECT_TRUE(fs::is_empty(state / "cases"));
}

// A number beyond double (1e400) and a string that is not UTF-8: 400, not 500.
TEST_P(AgentHostile, NumberOutOfRangeAndInvalidUtf8Get400) {
  ASSERT_TRUE(start());
  std::string big = valid_spec("case-num").dump();
  const auto at = big.find("\"repeat\":1");
  ASSERT_NE(at, std::string::npos);
  big.replace(at, 10, "\"repeat\":1e400");
  auto r = client().Post("/v1/cases", big, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("malformed JSON"), std::string::npos) << r->body;
  std::string bad = valid_spec("case-utf").dump();
  bad.replace(bad.find("\"smoke\""), 7, "\"sm\xff\xfeoke\"");
  r = client().Post("/v1/cases", bad, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_TRUE(json::accept(r->body)) << "the error answer itself must be JSON";
  EXPECT_TRUE(runs().empty());
}

// ---- finding 2: slow clients, huge heads, refused bodies ---------------------------------

// 64 clients that send a request head (or, over TLS, a ClientHello) one byte at a time,
// 8 of them from the address /v1/health then comes from: health answers while all 64 are
// still connected and unanswered. Judged is that event, not a wall time (a 1 s limit failed
// by chance at nice 19 beside a TCG guest): an agent that served the slow clients first
// would answer health only after their 60 s head deadline let them go, so health is asked
// with half that deadline as its bound and must come before any slow client was closed.
TEST_P(AgentHostile, HealthAnswersWhile64SlowClientsAreConnected) {
  ASSERT_TRUE(start("qualify-ok.sh", nullptr, {"--header-deadline-s", "60"}));
  std::vector<std::unique_ptr<Raw>> slow;
  for (int i = 0; i < 64; ++i) {
    const std::string src = i < 8 ? "127.0.0.1" : "127.0.0." + std::to_string(i - 6);
    slow.push_back(std::make_unique<Raw>(port, tls, src, /*handshake=*/false));
    ASSERT_TRUE(slow.back()->ok()) << "connection " << i;
  }
  // One byte per slow client every 200 ms while health is asked (a ClientHello's first
  // bytes over TLS, a header line over plain HTTP): no per-read timeout ever fires.
  const std::string drip = tls ? std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11)
                               : std::string("GET /v1/health HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa");
  std::atomic<bool> done{false};
  std::thread dripper([&] {
    for (std::size_t k = 0; !done && k < drip.size() * 4; ++k) {
      for (auto& s : slow) s->send(std::string(1, drip[k % drip.size()]));
      for (int t = 0; t < 10 && !done; ++t) std::this_thread::sleep_for(milliseconds(20));
    }
  });
  const auto t0 = Clock::now();
  const int status = health_status("127.0.0.1", seconds(30));
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
  int closed = 0;
  for (auto& s : slow) closed += s->closed_within(milliseconds(0)) ? 1 : 0;
  done = true;
  dripper.join();
  EXPECT_EQ(status, 200) << "no health answer within 30 s (half the slow clients' head deadline)";
  EXPECT_EQ(closed, 0) << "health answered (after " << took << " ms) only once slow clients were let go";
}

/// A connection from `source` that has sent the first bytes of a head (over TLS: of a
/// ClientHello) and then nothing: it waits for its head until the head deadline.
std::unique_ptr<Raw> open_slow(int port, bool tls, const std::string& source) {
  auto h = std::make_unique<Raw>(port, tls, source, false);
  if (h->ok()) h->send(tls ? std::string("\x16", 1) : std::string("GET /v1/he"));
  return h;
}

/// How many of `held` the agent has closed (looked at without waiting).
int closed_count(std::vector<std::unique_ptr<Raw>>& held) {
  int n = 0;
  for (auto& h : held) n += h->closed_within(milliseconds(0)) ? 1 : 0;
  return n;
}

// Slow clients that fill every slot of the runner's own address (and, from 8 addresses,
// every slot of the server): the runner's request is still served, because a full pool
// closes the connection that has waited longest for its head to make room (the runner got
// 503 for as long as the slow ones reconnected). Each slow client is known to hold its slot
// (its connection thread is there and sleeps in poll) before the next one comes.
TEST_P(AgentHostile, SlowClientsCannotTakeEverySlot) {
  ASSERT_TRUE(start("qualify-ok.sh", nullptr,
                    {"--max-connections-per-address", "4", "--max-connections", "8", "--header-deadline-s", "60"}));
  // The agent's threads without a connection: its count once a served request's thread
  // has ended and the count holds still for 200 ms.
  ASSERT_EQ(health_status("127.0.0.2"), 200);
  long base = 0;
  ASSERT_TRUE(eventually([&] {
    const long before = status_field(pid, "Threads:");
    std::this_thread::sleep_for(milliseconds(200));
    base = status_field(pid, "Threads:");
    return base > 0 && base == before;
  }));
  const auto hold = [&](std::vector<std::unique_ptr<Raw>>& into, const std::string& source, long threads) {
    into.push_back(open_slow(port, tls, source));
    return into.back()->ok() &&
           eventually([&] { return status_field(pid, "Threads:") == threads && all_threads_sleeping(pid); });
  };
  std::vector<std::unique_ptr<Raw>> same, others;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(hold(same, "127.0.0.3", base + i + 1)) << "slow client " << i;
  EXPECT_EQ(health_status("127.0.0.3"), 200) << "the address's four slots were all held by slow clients";
  EXPECT_TRUE(eventually([&] { return closed_count(same) == 1; }, seconds(10)))
      << closed_count(same) << " of the four slow clients of 127.0.0.3 were closed (one makes room)";
  EXPECT_TRUE(same[0]->closed_within(milliseconds(0))) << "the one closed was not the one that waited longest";
  ASSERT_TRUE(eventually([&] { return status_field(pid, "Threads:") == base + 3; }))
      << "the threads of the health request and of the closed slow client did not end";
  // 3 + 5 slow connections from other addresses: the server's 8 slots are full, and the
  // next client of a new address takes the place of the slow one that has waited longest.
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(hold(others, "127.0.0." + std::to_string(10 + i), base + 3 + i + 1)) << "slow client " << i;
  EXPECT_EQ(health_status("127.0.0.20"), 200) << "the server's eight slots were all held by slow clients";
  EXPECT_TRUE(eventually([&] { return closed_count(same) == 2; }, seconds(10)))
      << "the slow client that waited longest (127.0.0.3's second) was not closed to make room";
  EXPECT_TRUE(same[1]->closed_within(milliseconds(0)));
  EXPECT_EQ(closed_count(others), 0);
}

// Every slot of an address inside a request (waiting status requests of a running case):
// no connection can be closed to make room, and the next one from that address is refused
// at once (503 over plain HTTP, closed over TLS); another address is served.
TEST_P(AgentHostile, ConnectionsPerAddressInsideRequestsAreBounded) {
  ASSERT_TRUE(start("qualify-ok.sh", nullptr, {"--max-connections-per-address", "4", "--header-deadline-s", "60"}));
  { std::ofstream(dir / "sleep_s", std::ios::trunc) << "30"; }
  make_bundle("case-held");
  ASSERT_EQ(post_spec(valid_spec("case-held")), 202);
  ASSERT_TRUE(eventually([&] { return phase_of("case-held") == "pressure"; })) << "the case never reached pressure";
  const auto open_held = [&] {
    auto h = std::make_unique<Raw>(port, tls, "127.0.0.3");
    if (h->ok()) h->send(auth_head("GET", "/v1/cases/case-held?wait_ms=20000&state=running&phase=pressure") + "\r\n");
    return h;
  };
  std::vector<std::unique_ptr<Raw>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(open_held());
    ASSERT_TRUE(held.back()->ok());
  }
  // A probe that comes while a held request's head is still on its way closes that one
  // instead (it is then replaced before the next probe). Judged is a probe refused while
  // all four held requests are open and unanswered, inside their handlers.
  const bool refused = eventually(
      [&] {
        for (auto& h : held)
          if (h->closed_within(milliseconds(0))) h = open_held();
        Raw extra(port, tls, "127.0.0.3", false);
        if (!extra.ok()) return false;
        const bool no = tls ? extra.closed_within(milliseconds(2000))
                            : extra.status_line(milliseconds(2000)).rfind("HTTP/1.1 503", 0) == 0;
        return no && closed_count(held) == 0;
      },
      seconds(15));
  EXPECT_TRUE(refused) << "a fifth connection from 127.0.0.3 was not refused while four requests were held";
  for (auto& h : held) EXPECT_TRUE(h->received().empty()) << h->received().substr(0, 200);
  if (!tls) {
    Raw extra(port, false, "127.0.0.3", false);
    ASSERT_TRUE(extra.ok());
    EXPECT_EQ(extra.status_line(milliseconds(2000)), "HTTP/1.1 503 Service Unavailable");
    EXPECT_NE(extra.received().find("per client address"), std::string::npos) << extra.received();
  }
  EXPECT_EQ(health_status("127.0.0.4"), 200);
  const auto cancel = client().Post("/v1/cases/case-held/cancel", "", "application/json");
  EXPECT_TRUE(cancel && cancel->status == 202);
}

// An HTTP/0.9 request line or the HTTP/2 preface: one 400 and the connection closes; what
// follows it is never parsed as a second request (httplib's 400 left it on the connection).
TEST_P(AgentHostile, Http09LineAndHttp2PrefaceGetOneAnswer) {
  ASSERT_TRUE(start());
  for (const std::string first : {"GET /v1/health\r\n", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"}) {
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send(first + "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"));
    const std::string all = r.read_until_closed(seconds(10));
    std::size_t answers = 0;
    for (std::size_t p = all.find("HTTP/1.1 "); p != std::string::npos; p = all.find("HTTP/1.1 ", p + 1)) ++answers;
    EXPECT_EQ(all.rfind("HTTP/1.1 400 Bad Request", 0), 0u) << all;
    EXPECT_NE(all.find("HTTP/0.9 and HTTP/2 are not served"), std::string::npos) << all;
    EXPECT_EQ(answers, 1u) << all;
    EXPECT_TRUE(r.closed_within(seconds(5)));
  }
  EXPECT_EQ(health_status(), 200);
}

// A head that keeps trickling in gets 408 at the head deadline and the connection is
// closed (over TLS: after the handshake; and a ClientHello that trickles is cut off).
TEST_P(AgentHostile, SlowHeadGets408AtTheHeadDeadline) {
  ASSERT_TRUE(start("qualify-ok.sh", nullptr, {"--header-deadline-s", "2"}));
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send("GET /v1/health HTTP/1.1\r\nX-Slow: "));
  std::string line;
  const auto t0 = Clock::now();
  for (int i = 0; i < 40 && line.empty(); ++i) {  // 1 byte per 250 ms, for at most 10 s
    if (!r.send("a")) break;
    if (r.readable(Clock::now() + milliseconds(250))) line = r.status_line(milliseconds(1000));
  }
  if (line.empty()) line = r.status_line(milliseconds(1000));
  EXPECT_EQ(line, "HTTP/1.1 408 Request Timeout") << "after "
                                                  << std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count()
                                                  << " ms";
  EXPECT_TRUE(r.closed_within(seconds(5)));
  if (tls) {
    Raw hello(port, true, "127.0.0.1", /*handshake=*/false);
    ASSERT_TRUE(hello.ok());
    const std::string ch("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11);
    bool closed = false;
    for (std::size_t i = 0; i < 40 && !closed; ++i) {
      hello.send(std::string(1, ch[i % ch.size()]));
      closed = hello.closed_within(milliseconds(250));
    }
    EXPECT_TRUE(closed) << "a ClientHello sent one byte per 250 ms was not cut off at the 2 s head deadline";
  }
  EXPECT_EQ(health_status(), 200);
}

// One million header lines: 431 after the first 64, the agent stops reading and closes
// (the client cannot get all 8 MB out: only what the socket buffers hold), and its memory
// does not grow by what was sent (it grew by about 110 MB and kept it).
TEST_P(AgentHostile, MillionHeaderLinesGet431AndTheAgentStopsReading) {
  ASSERT_TRUE(start());
  ASSERT_EQ(health_status(), 200);
  const long rss0 = rss_kib(pid);
  const long long read0 = read_bytes(pid);
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n"));
  std::string batch;
  for (int i = 0; i < 8192; ++i) batch += "X-A: b\r\n";
  int sent_lines = 0;
  for (int b = 0; b < 1000000 / 8192 + 1 && r.send(batch); ++b) sent_lines += 8192;
  const std::string line = r.status_line(seconds(10));
  EXPECT_EQ(line, "HTTP/1.1 431 Request Header Fields Too Large") << r.received().substr(0, 300);
  EXPECT_NE(r.received().find("more than 64 header lines"), std::string::npos) << r.received().substr(0, 300);
  ASSERT_EQ(health_status(), 200);
  const long rss1 = rss_kib(pid);
  const long long read_by_agent = read_bytes(pid) - read0;
  RecordProperty("rss_before_kib", std::to_string(rss0));
  RecordProperty("rss_after_kib", std::to_string(rss1));
  RecordProperty("bytes_read_by_agent", std::to_string(read_by_agent));
  std::printf("agent RSS before %ld KiB, after one million header lines %ld KiB; it read %lld bytes; the client "
              "got %d lines out before the agent closed\n",
              rss0, rss1, read_by_agent, sent_lines);
  if (tls) {
    EXPECT_LT(read_by_agent, 4 << 20) << "the agent kept reading the header lines";
  }
  EXPECT_LT(sent_lines, 1000000) << "the agent accepted all one million header lines";
  EXPECT_LT(rss1 - rss0, 32 * 1024) << "the agent's RSS grew by " << (rss1 - rss0) << " KiB";
}

// A body declared at 50 MB: 413 at once, and the agent reads only a bounded part of it and
// closes (it used to read all 50 MB, holding a thread): the client cannot get all 50 MiB
// out, only what the socket buffers hold.
TEST_P(AgentHostile, DeclaredFiftyMegabyteBodyIsRefusedUnread) {
  ASSERT_TRUE(start());
  ASSERT_EQ(health_status(), 200);
  const long long read0 = read_bytes(pid);
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases") + "Content-Type: application/json\r\nContent-Length: " +
                     std::to_string(50u << 20) + "\r\n\r\n"));
  const std::string mib(1 << 20, 'x');
  int sent = 0;
  while (sent < 50 && r.send(mib)) ++sent;
  EXPECT_EQ(r.status_line(seconds(10)), "HTTP/1.1 413 Payload Too Large");
  const long long read_by_agent = read_bytes(pid) - read0;
  std::printf("50 MB body: the client sent %d MiB before the agent closed; the agent read %lld bytes\n", sent,
              read_by_agent);
  if (tls) {
    EXPECT_LT(read_by_agent, 8 << 20) << "the agent read the refused body";
  }
  EXPECT_LT(sent, 50) << "the agent read all of the refused body";
  EXPECT_TRUE(runs().empty());
  EXPECT_TRUE(fs::is_empty(state / "cases"));
}

// What follows a refused chunked body is never parsed as further requests: one answer
// (413) and the connection closes. The request after the body is sent once the 413 has
// arrived (the library used to keep the connection and answer it despite its own
// "Connection: close").
TEST_P(AgentHostile, RefusedChunkedBodyIsNotParsedAsFurtherRequests) {
  ASSERT_TRUE(start("qualify-ok.sh", nullptr, {"--max-body-bytes", "4096"}));
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases") + "Transfer-Encoding: chunked\r\n\r\n1388\r\n" +
                     std::string(5000, 'x')));
  ASSERT_EQ(r.status_line(seconds(10)), "HTTP/1.1 413 Payload Too Large") << r.received();
  r.send("\r\nGET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n");  // fails once the agent has closed
  const std::string all = r.read_until_closed(seconds(10));
  std::size_t answers = 0;
  for (std::size_t p = all.find("HTTP/1.1 "); p != std::string::npos; p = all.find("HTTP/1.1 ", p + 1)) ++answers;
  EXPECT_EQ(answers, 1u) << all;
  EXPECT_EQ(all.rfind("HTTP/1.1 413 Payload Too Large", 0), 0u) << all;
}

// A NUL inside the Authorization header is refused (the library's accessors would read
// the value only up to it).
TEST_P(AgentHostile, NulInTheAuthorizationHeaderIsRefused) {
  ASSERT_TRUE(start());
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send("GET /v1/qualification HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + std::string(kToken) +
                     std::string(1, '\0') + "junk\r\n\r\n"));
  EXPECT_EQ(r.status_line(seconds(10)), "HTTP/1.1 400 Bad Request") << r.received();
}

// ---- finding 3: the unclean-VM guard --------------------------------------------------

// A cancelled case's bundle is judged too: the executor restores on SIGTERM (no SIGKILL),
// reports an unclean restoration, and the VM refuses the next case.
TEST_P(AgentHostile, CancelledCaseWithAnUncleanRestorationMarksTheVm) {
  make_unclean_bundle("case-cu", "zram device /dev/zram1 still active");
  make_bundle("case-next");
  write_exec(dir / "executor.sh",
             "#!/bin/sh\n"
             "out=\"$4\"; id=$(basename \"$(dirname \"$out\")\")\n"
             "echo \"$id\" >> " + marker.string() + "\n"
             "trap 'cp " + (dir / "bundles").string() + "/$id.db \"$out/$id.db\"; echo restored > " +
                 (dir / "restored").string() + "; exit 0' TERM\n"
             "echo pressure > \"$out/phase\"\n"
             "i=0; while [ $i -lt 600 ]; do sleep 0.1 & wait $!; i=$((i+1)); done\n");
  ASSERT_TRUE(start());
  ASSERT_EQ(post_spec(valid_spec("case-cu")), 202);
  ASSERT_TRUE(eventually([&] { return phase_of("case-cu") == "pressure"; }));
  auto k = client().Post("/v1/cases/case-cu/cancel", "", "application/json");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->status, 202);
  const json fin = wait_final("case-cu");
  EXPECT_EQ(fin["state"], "cancelled") << fin.dump();
  EXPECT_EQ(fin["exit_code"], 0) << "the executor must end on SIGTERM after its restoration, not by SIGKILL";
  EXPECT_TRUE(fs::exists(dir / "restored"));
  EXPECT_EQ(fin.value(json::json_pointer("/restoration/clean"), json()), false) << fin.dump();
  EXPECT_TRUE(fs::exists(state / "unclean.json"));
  std::string body;
  EXPECT_EQ(post_spec(valid_spec("case-next"), &body), 412);
  EXPECT_NE(body.find("zram device /dev/zram1 still active"), std::string::npos) << body;
  EXPECT_EQ(runs(), std::vector<std::string>{"case-cu"});
}

// The unclean mark cannot be written (its temporary file is a symlink to nowhere): the
// agent refuses cases and says why on /v1/health, until the operator clears it.
TEST_P(AgentHostile, UnwritableUncleanMarkRefusesCasesAndHealthSaysWhy) {
  make_unclean_bundle("case-u", "cgroup sys/fs/cgroup/harness/bg still exists");
  make_bundle("case-next");
  ASSERT_TRUE(start());
  fs::create_symlink("/nonexistent-directory/unclean.json", state / "unclean.json.tmp");
  ASSERT_EQ(post_spec(valid_spec("case-u")), 202);
  EXPECT_EQ(wait_final("case-u")["state"], "completed");
  auto h = client(false).Get("/v1/health");
  ASSERT_TRUE(h);
  const json hj = json::parse(h->body);
  EXPECT_EQ(hj["accepting_cases"], false) << h->body;
  ASSERT_TRUE(hj["unclean"].is_object()) << h->body;
  EXPECT_EQ(hj["unclean"]["case_id"], "case-u") << h->body;
  EXPECT_TRUE(hj["unclean"]["not_written"].is_string()) << h->body;
  std::string body;
  EXPECT_EQ(post_spec(valid_spec("case-next"), &body), 412) << body;
  EXPECT_NE(body.find("could not be written"), std::string::npos) << body;
  EXPECT_EQ(runs(), std::vector<std::string>{"case-u"});
  ASSERT_EQ(client().Delete("/v1/unclean")->status, 200);
  EXPECT_EQ(post_spec(valid_spec("case-next")), 202);
  EXPECT_EQ(wait_final("case-next")["state"], "completed");
}

// ---- finding 4: cancel in every state ---------------------------------------------------

// A cancel that arrives while the case is being qualified: the executor never starts.
TEST_P(AgentHostile, CancelDuringQualificationStartsNoExecutor) {
  write_exec(dir / "qualify-slow.sh",
             "#!/bin/sh\ntouch " + (dir / "qualifying").string() +
                 "\ni=0; while [ ! -e " + (dir / "release").string() +
                 " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
                 "echo '{\"passed\":true,\"checks\":[]}'\n");
  make_bundle("case-q");
  ASSERT_TRUE(start("qualify-slow.sh"));
  auto submitted = std::async(std::launch::async, [&] {
    auto r = client().Post("/v1/cases", valid_spec("case-q").dump(), "application/json");
    return r ? r->status : 0;
  });
  ASSERT_TRUE(eventually([&] { return fs::exists(dir / "qualifying"); }));
  auto s = client().Get("/v1/cases/case-q");
  ASSERT_TRUE(s);
  EXPECT_EQ(json::parse(s->body)["state"], "qualifying") << s->body;
  auto k = client().Post("/v1/cases/case-q/cancel", "", "application/json");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->status, 202) << k->body;
  { std::ofstream(dir / "release") << "1"; }
  EXPECT_EQ(submitted.get(), 202);
  const json fin = wait_final("case-q");
  EXPECT_EQ(fin["state"], "cancelled") << fin.dump();
  EXPECT_TRUE(runs().empty()) << "the executor ran although the case was cancelled before it started";
  EXPECT_EQ(json::parse(client(false).Get("/v1/health")->body)["busy"], false);
}

// A cancel while the agent reads a finished case's bundle (here held locked by another
// process): /v1/health still answers at once, the case reads "finishing", and the cancel
// is honoured.
TEST_P(AgentHostile, CancelWhileFinishingIsHonouredAndHealthDoesNotWait) {
  make_bundle("case-f");
  const fs::path locked = dir / "locked", release = dir / "release";
  write_exec(dir / "locker.py",
             "#!/usr/bin/python3\nimport os, sqlite3, sys, time\n"
             "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
             "con.execute('PRAGMA journal_mode=DELETE')\ncon.execute('BEGIN EXCLUSIVE')\n"
             "open('" + locked.string() + "', 'w').close()\n"
             "for _ in range(400):\n    if os.path.exists('" + release.string() + "'): break\n    time.sleep(0.05)\n"
             "con.execute('ROLLBACK')\n");
  write_exec(dir / "executor.sh",
             "#!/bin/sh\n"
             "out=\"$4\"; id=$(basename \"$(dirname \"$out\")\")\n"
             "echo \"$id\" >> " + marker.string() + "\n"
             "cp " + (dir / "bundles").string() + "/$id.db \"$out/$id.db\"\n" +
             (dir / "locker.py").string() + " \"$out/$id.db\" &\n"
             "i=0; while [ ! -e " + locked.string() + " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n");
  ASSERT_TRUE(start());
  ASSERT_EQ(post_spec(valid_spec("case-f")), 202);
  ASSERT_TRUE(eventually([&] { return fs::exists(locked); }));
  const bool finishing = eventually([&] { return state_within_2s("case-f") == "finishing"; }, seconds(8));
  EXPECT_TRUE(finishing) << "the case never read 'finishing' while its bundle was locked";
  EXPECT_EQ(health_status(), 200);
  // The event judged: health answered while the bundle was still locked (the case still
  // finishing); an agent whose health waited for the bundle answers only after the lock.
  {
    auto c = client();
    auto st = c.Get("/v1/cases/case-f");
    ASSERT_TRUE(st);
    EXPECT_EQ(json::parse(st->body)["state"], "finishing") << "health waited for the bundle: " << st->body;
  }
  auto k = client().Post("/v1/cases/case-f/cancel", "", "application/json");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->status, 202);
  { std::ofstream(release) << "1"; }
  const json fin = wait_final("case-f");
  EXPECT_EQ(fin["state"], "cancelled") << fin.dump();
}

// ---- finding 5: specs aimed at the VM's own services ---------------------------------------

TEST_P(AgentHostile, SpecsAimedAtTheVmsOwnServicesGet400) {
  ASSERT_TRUE(start("qualify-ok.sh", nullptr, {"--allow-path", "/srv/harness-extra"}));
  struct Bad {
    const char* what;
    std::function<void(json&)> edit;
    const char* field;
  };
  const std::vector<Bad> bad{
      {"system.slice", [](json& j) { j["cgroups"]["parent"] = "system.slice"; }, "cgroups.parent"},
      {"user.slice", [](json& j) { j["cgroups"]["parent"] = "user.slice"; }, "cgroups.parent"},
      {"init.scope", [](json& j) { j["cgroups"]["parent"] = "init.scope"; }, "cgroups.parent"},
      {"kernel.panic_on_oops",
       [](json& j) { j["variant"] = {{"name", "candidate"}, {"pair_id", "p"}, {"sysctls", {{"kernel.panic_on_oops", "1"}}}}; },
       "variant.sysctls.kernel.panic_on_oops"},
      {"vm.panic_on_oom",
       [](json& j) { j["variant"] = {{"name", "candidate"}, {"pair_id", "p"}, {"sysctls", {{"vm.panic_on_oom", "1"}}}}; },
       "variant.sysctls.vm.panic_on_oom"},
      {"ksm",
       [](json& j) { j["variant"] = {{"name", "candidate"}, {"pair_id", "p"}, {"sysfs", {{"/sys/kernel/mm/ksm/run", "1"}}}}; },
       "variant.sysfs./sys/kernel/mm/ksm/run"},
      {"/etc/shadow", [](json& j) { j["backend"]["swapfile_path"] = "/etc/shadow"; }, "backend.swapfile_path"},
      {"/dev/sda", [](json& j) { j["canaries"]["sqlite_db_path"] = "/dev/sda"; }, "canaries.sqlite_db_path"},
  };
  int n = 0;
  for (const auto& b : bad) {
    json spec = valid_spec("case-bad" + std::to_string(n++));
    b.edit(spec);
    auto r = client().Post("/v1/cases", spec.dump(), "application/json");
    ASSERT_TRUE(r) << b.what;
    EXPECT_EQ(r->status, 400) << b.what << ": " << r->body;
    const json j = json::parse(r->body);
    EXPECT_EQ(j.value("field", json()), b.field) << b.what << ": " << r->body;
    if (r->status == 202) wait_final(spec["case_id"].get<std::string>());  // accepted: the next input is judged alone
  }
  EXPECT_TRUE(runs().empty());
  EXPECT_TRUE(fs::is_empty(state / "cases"));
  // What the A/B campaigns use passes, and a directory given with --allow-path is accepted.
  json ok = valid_spec("case-ok");
  ok["cgroups"]["parent"] = "harness-ab";
  ok["variant"] = {{"name", "candidate"},
                   {"pair_id", "p"},
                   {"sysctls", {{"vm.swappiness", "100"}}},
                   {"sysfs", {{"/sys/kernel/mm/lru_gen/enabled", "y"}}}};
  ok["backend"]["swapfile_path"] = "/srv/harness-extra/swapfile";
  make_bundle("case-ok");
  std::string body;
  EXPECT_EQ(post_spec(ok, &body), 202) << body;
  EXPECT_EQ(wait_final("case-ok")["state"], "completed");
}

// ---- finding 6: qualification, options, pids ------------------------------------------------

// GET /v1/qualification runs alone: a second one and a submission that come meanwhile are
// answered at once (409), not run concurrently with it.
TEST_P(AgentHostile, QualificationIsSerialisedWithItselfAndWithSubmissions) {
  const fs::path log = dir / "qualify.log", release = dir / "release";
  write_exec(dir / "qualify-slow.sh",
             "#!/bin/sh\necho begin >> " + log.string() + "\ni=0; while [ ! -e " + release.string() +
                 " ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\necho end >> " + log.string() +
                 "\necho '{\"passed\":true,\"checks\":[]}'\n");
  ASSERT_TRUE(start("qualify-slow.sh"));
  auto first = std::async(std::launch::async, [&] {
    auto r = client().Get("/v1/qualification");
    return r ? r->status : 0;
  });
  ASSERT_TRUE(eventually([&] { return test_support::slurp(log).find("begin") != std::string::npos; }));
  auto second = std::async(std::launch::async, [&] {
    auto r = client().Get("/v1/qualification");
    return r ? r->status : 0;
  });
  auto submission = std::async(std::launch::async, [&] {
    auto r = client().Post("/v1/cases", valid_spec("case-s").dump(), "application/json");
    return r ? std::make_pair(r->status, r->body) : std::make_pair(0, std::string());
  });
  const bool answered = second.wait_for(seconds(10)) == std::future_status::ready &&
                        submission.wait_for(seconds(10)) == std::future_status::ready;
  const std::string during = test_support::slurp(log);
  { std::ofstream(release) << "1"; }
  EXPECT_TRUE(answered) << "a request waited for the running qualification";
  EXPECT_EQ(during, "begin\n") << "qualifications ran concurrently";
  EXPECT_EQ(second.get(), 409);
  const auto [st, body] = submission.get();
  EXPECT_EQ(st, 409) << body;
  EXPECT_NE(body.find("a qualification is running"), std::string::npos) << body;
  EXPECT_EQ(first.get(), 200);
  EXPECT_TRUE(runs().empty());
}

// The submission's qualification is the executor's (case_qualification_options): the
// spec's compressor is checked at submission, so a missing one is a 412, not an
// infra_failed case after a 202.
TEST_P(AgentHostile, SubmissionQualifiesWithTheExecutorsOptions) {
  ASSERT_TRUE(start(""));  // the agent's own qualification of this host
  json spec = valid_spec("case-alg");
  spec["backend"]["zram_algorithm"] = "nosuchcompressor";
  std::string body;
  EXPECT_EQ(post_spec(spec, &body), 412) << body;
  EXPECT_NE(body.find("zram_algorithm: nosuchcompressor not found"), std::string::npos) << body;
  EXPECT_TRUE(runs().empty());
}

// After the executor has been reaped, no cancel signals its pid: here a process that got
// the same pid (and made itself a group leader) survives a second cancel and the end of
// the grace. Needs root (pids are chosen through /proc/sys/kernel/ns_last_pid).
TEST_F(AgentFixture, CancelAfterTheExecutorIsReapedNeverSignalsItsPid) {
  // A precondition CI always meets (the tests run as root: harness/scripts/test.sh runs
  // install-deps.sh): without it the test fails, saying why, rather than passing untested.
  ASSERT_EQ(::access("/proc/sys/kernel/ns_last_pid", W_OK), 0)
      << "needs a writable /proc/sys/kernel/ns_last_pid (root) to give a process a chosen pid: " << std::strerror(errno);
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // the executor's orphan comes to this process
  write_exec(dir / "executor.sh",
             "#!/bin/sh\n"
             "trap 'exit 0' TERM\n"
             "echo $$ > " + (dir / "executor.pid").string() + "\n"
             "(trap '' TERM; exec sleep 300) &\n"
             "echo $! > " + (dir / "child.pid").string() + "\n"
             "while :; do sleep 1 & wait $!; done\n");
  ASSERT_TRUE(start());
  ASSERT_EQ(client().Post("/v1/cases", valid_spec("case-p").dump(), "application/json")->status, 202);
  const pid_t exec_pid = read_pid(dir / "executor.pid");
  const pid_t child_pid = read_pid(dir / "child.pid");
  ASSERT_GT(exec_pid, 0);
  ASSERT_GT(child_pid, 0);
  ASSERT_EQ(client().Post("/v1/cases/case-p/cancel", "", "application/json")->status, 202);
  // The executor exits on SIGTERM; once it is reaped its pid is free as soon as the
  // TERM-ignoring child (its group's last member) is gone too.
  ASSERT_TRUE(eventually([&] { return !fs::exists("/proc/" + std::to_string(exec_pid)); }, seconds(20)));
  // Members of the executor's group that outlived it are this process's children now
  // (subreaper): kill and reap them all, so that the group id, and with it the pid, is free.
  ::kill(child_pid, SIGKILL);
  ASSERT_TRUE(eventually([&] {
    while (::waitpid(-exec_pid, nullptr, WNOHANG) > 0) {
      // reaped one; look for more
    }
    return live_group_members(exec_pid).empty() && !fs::exists("/proc/" + std::to_string(child_pid));
  }));
  // A process with the executor's pid, leader of its own group.
  pid_t decoy = -1;
  struct KillAtEnd {
    pid_t& p;
    ~KillAtEnd() {
      if (p > 0) {
        ::kill(p, SIGKILL);
        ::waitpid(p, nullptr, 0);
      }
      ::prctl(PR_SET_CHILD_SUBREAPER, 0);
    }
  } cleanup{decoy};
  for (int attempt = 0; attempt < 200 && decoy != exec_pid; ++attempt) {
    if (decoy > 0) {
      ::kill(decoy, SIGKILL);
      ::waitpid(decoy, nullptr, 0);
    }
    { std::ofstream("/proc/sys/kernel/ns_last_pid") << exec_pid - 1; }
    decoy = fork();
    if (decoy == 0) {
      setpgid(0, 0);
      ::close(1);  // nothing of the test's output stays open in it
      ::close(2);
      for (;;) pause();
    }
  }
  ASSERT_EQ(decoy, exec_pid) << "could not give a process the executor's pid";
  setpgid(decoy, decoy);
  ASSERT_EQ(client().Post("/v1/cases/case-p/cancel", "", "application/json")->status, 202);
  const json fin = wait_final("case-p");
  EXPECT_EQ(fin["state"], "cancelled") << fin.dump();
  int st = 0;
  const pid_t gone = ::waitpid(decoy, &st, WNOHANG);
  EXPECT_EQ(gone, 0) << "the process that reused the executor's pid was killed by signal "
                     << (gone == decoy && WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  if (gone == decoy) decoy = -1;  // already reaped
}

// ---- the last hostile inputs ----------------------------------------------------

/// A Range header of `n` ranges "0-" (2,700 fill an 8 KB header line).
std::string many_ranges(int n) {
  std::string r = "Range: bytes=0-";
  for (int i = 1; i < n; ++i) r += ",0-";
  return r + "\r\n";
}

/// The value of header `name` in the raw answer `resp` ("" when absent).
std::string header_of(const std::string& resp, const std::string& name) {
  const auto head_end = resp.find("\r\n\r\n");
  const std::string head = resp.substr(0, head_end);
  const auto at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const auto from = at + 4 + name.size();
  return head.substr(from, head.find("\r\n", from) - from);
}

// Range is ignored (the agent serves no ranges; httplib built a multipart answer in memory,
// one part per range): 2,700 ranges on /v1/health get the plain 200 answer (it was 875 KB),
// and so do 64 such requests at once (the agent grew from 19 to 156 MiB building them).
TEST_P(AgentHostile, RangeHeadersAreIgnored) {
  ASSERT_TRUE(start());
  const std::string req = "GET /v1/health HTTP/1.1\r\nHost: x\r\n" + many_ranges(2700) + "Connection: close\r\n\r\n";
  {
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send(req));
    const std::string all = r.read_until_closed(seconds(20));
    EXPECT_EQ(all.substr(0, all.find("\r\n")), "HTTP/1.1 200 OK") << all.substr(0, 300);
    EXPECT_LT(all.size(), 4096u) << "a 2,700-range request got " << all.size() << " bytes";
    EXPECT_EQ(all.find("multipart/byteranges"), std::string::npos) << all.substr(0, 300);
    EXPECT_TRUE(json::accept(all.substr(all.find("\r\n\r\n") + 4))) << all;
  }
  // One range is ignored too (a 206 with part of the status document helps nobody).
  {
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send("GET /v1/health HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nConnection: close\r\n\r\n"));
    EXPECT_EQ(r.status_line(seconds(20)), "HTTP/1.1 200 OK") << r.received();
  }
  // 64 at once, first without Range (a peer run), then with 2,700 ranges each. The proof that
  // ranges are ignored is each answer's size (< 4 KB: no multipart answer was built; the old
  // ones were 875 KB each, 56 MiB or more of RSS for 64). RSS is printed beside the peer run's
  // but not asserted: what 64 concurrent connections cost depends on how many are alive at once
  // (threads, malloc arenas, OpenSSL buffers), and two identical bursts on a loaded 2-core
  // machine differed by up to 24 MiB (plain and TLS, 20-55 MiB).
  auto burst = [&](const std::string& request) {
    std::vector<std::size_t> sizes(64, 0);
    std::vector<std::string> lines(64);
    std::vector<std::thread> clients;
    for (int i = 0; i < 64; ++i)
      clients.emplace_back([&, i] {
        Raw r(port, tls, "127.0.0." + std::to_string(10 + i % 8));  // 8 per address, under the 16 allowed
        if (!r.ok() || !r.send(request)) return;
        const std::string all = r.read_until_closed(seconds(60));
        sizes[i] = all.size();
        lines[i] = all.substr(0, all.find("\r\n"));
      });
    for (auto& t : clients) t.join();
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(lines[i], "HTTP/1.1 200 OK") << "request " << i;
      EXPECT_LT(sizes[i], 4096u) << "request " << i;
    }
    return rss_kib(pid);
  };
  const long peer = burst("GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const long rss = burst(req);
  std::printf("agent VmRSS after 64 concurrent plain requests: %ld KiB; after 64 concurrent 2,700-range requests: %ld KiB\n",
              peer, rss);
  EXPECT_GT(peer, 0);
  EXPECT_GT(rss, 0);
}

// A header line above httplib's own 8 KB line limit (12 KB, within the guard's head limit;
// it was a Range line of 5,400 ranges, which the guard now drops): one 400, and the
// connection closes; the rest of that head is not parsed as a second request (it got a
// second 400).
TEST_P(AgentHostile, HeadLineAboveTheLibrarysLimitGetsOneAnswer) {
  ASSERT_TRUE(start());
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send("GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(12000, 'a') + "\r\nX-After: 1\r\n\r\n"));
  const std::string all = r.read_until_closed(seconds(20));
  std::size_t answers = 0;
  for (std::size_t p = all.find("HTTP/1.1 "); p != std::string::npos; p = all.find("HTTP/1.1 ", p + 1)) ++answers;
  EXPECT_EQ(all.rfind("HTTP/1.1 400 Bad Request", 0), 0u) << all;
  EXPECT_EQ(answers, 1u) << all;
  EXPECT_TRUE(r.closed_within(seconds(5)));
}

// A token the documented rule refuses (harness/agent/API.md: at least 32 characters, only
// the characters of a bearer token, at least 10 different ones, not a shorter string
// repeated) stops the agent at startup with an error that names the token file and the
// rule it breaks; "ab" x 16 and 31 spaces and an x started it.
TEST_F(AgentFixture, TokenWithLittleEntropyIsRefusedAtStartup) {
  const std::vector<std::pair<std::string, std::string>> weak{
      {"0123456789abcdef0123456789abcde", "shorter than 32"},
      {std::string(40, 'a'), "only 1 different character"},
      {[] {
         std::string t;
         for (int i = 0; i < 16; ++i) t += "ab";
         return t;
       }(),
       "only 2 different characters"},
      {std::string(31, ' ') + "x", "a space at offset 0"},
      {"0123456789abcdef0123456789abcdef", "a string of 16 characters repeated"},
      {"%73%33cr3t-token-0123456789abcdef-0123456789", "'%' at offset 0"},
  };
  for (const auto& [bad, why] : weak) {
    { std::ofstream(token_file, std::ios::trunc) << bad << "\n"; }
    std::string out;
    const bool started = start("qualify-ok.sh", &out);
    EXPECT_FALSE(started) << "token '" << bad << "' accepted";
    if (started) stop();
    EXPECT_NE(out.find("token file " + token_file.string()), std::string::npos) << out;
    EXPECT_NE(out.find(why), std::string::npos) << "token '" << bad << "': " << out;
    EXPECT_NE(out.find("head -c 32 /dev/urandom | base64"), std::string::npos) << out;
  }
  { std::ofstream(token_file, std::ios::trunc) << kToken << "\n"; }
  EXPECT_TRUE(start());
}

// A field's name or value holding ESC or BEL: the error quotes it as \xNN, never the raw
// byte (the JSON answer decoded holds printable ASCII only).
TEST_P(AgentHostile, ControlBytesOfTheRequestAreEscapedInErrors) {
  ASSERT_TRUE(start());
  const auto printable_only = [](const std::string& t) {
    for (unsigned char c : t)
      if (c < 0x20 || c >= 0x7f) return false;
    return true;
  };
  json by_name = valid_spec("case-esc");
  by_name["backend"]["x\x1b[31mred"] = 1;
  json by_value = valid_spec("case-bel");
  by_value["backend"]["delayed_swapfile"] = "on\x07\x1b[2J";
  for (const auto& [spec, shown] : {std::pair{by_name, std::string("x\\x1b[31mred")},
                                    std::pair{by_value, std::string("on\\x07\\x1b[2J")}}) {
    std::string body;
    EXPECT_EQ(post_spec(spec, &body), 400) << body;
    const json j = json::parse(body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << body;
    ASSERT_TRUE(j["error"].is_string()) << body;
    const std::string error = j["error"], field = j["field"].is_string() ? j["field"].get<std::string>() : "";
    EXPECT_TRUE(printable_only(error)) << error;
    EXPECT_TRUE(printable_only(field)) << field;
    EXPECT_NE(error.find(shown), std::string::npos) << error;
  }
  EXPECT_TRUE(runs().empty());
}

// Expect: 100-continue with a declared body above the limit: 413 instead of the 100 (it was
// "HTTP/1.1 -1 Internal Server Error"), and the connection closes; within the limit the
// 100 comes and the body is read.
TEST_P(AgentHostile, ExpectContinueWithAnOversizedBodyGets413BeforeAny100) {
  ASSERT_TRUE(start());
  {
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases") + "Content-Type: application/json\r\nContent-Length: " +
                       std::to_string(5u << 20) + "\r\nExpect: 100-continue\r\n\r\n"));
    const std::string all = r.read_until_closed(seconds(20));
    EXPECT_EQ(all.substr(0, all.find("\r\n")), "HTTP/1.1 413 Payload Too Large") << all;
    EXPECT_EQ(all.find("100 Continue"), std::string::npos) << all;
    EXPECT_EQ(header_of(all, "Content-Length"), std::to_string(all.size() - all.find("\r\n\r\n") - 4)) << all;
    EXPECT_NE(all.find("request body too large"), std::string::npos) << all;
  }
  {
    const std::string spec = valid_spec("case-expect").dump();
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases") + "Content-Type: application/json\r\nContent-Length: " +
                       std::to_string(spec.size()) + "\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"));
    EXPECT_EQ(r.status_line(seconds(20)), "HTTP/1.1 100 Continue") << r.received();
    make_bundle("case-expect");
    ASSERT_TRUE(r.send(spec));
    const std::string all = r.read_until_closed(seconds(20));
    EXPECT_NE(all.find("HTTP/1.1 202 Accepted"), std::string::npos) << all;
    EXPECT_EQ(wait_final("case-expect")["state"], "completed");
  }
}

// 500,000 one-byte chunks (3 MB of framing for 500 KB of body): the documented 400 at the
// raw byte limit (2 x the body limit + 64 KiB), not a connection closed without an answer.
TEST_P(AgentHostile, HalfAMillionOneByteChunksGet400) {
  ASSERT_TRUE(start());
  std::string chunks;
  chunks.reserve(3000005);
  for (int i = 0; i < 500000; ++i) chunks += "1\r\nx\r\n";
  chunks += "0\r\n\r\n";
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases") + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"));
  r.send(chunks);  // the agent stops reading at the limit; what it still takes is discarded
  const std::string all = r.read_until_closed(seconds(60));
  EXPECT_EQ(all.substr(0, all.find("\r\n")), "HTTP/1.1 400 Bad Request") << all.substr(0, 300);
  EXPECT_NE(all.find("on the wire, chunk framing included"), std::string::npos) << all.substr(0, 400);
  EXPECT_TRUE(runs().empty());
  EXPECT_EQ(health_status(), 200);
}

// A FIFO where a state file belongs (unclean.json, a case's status.json): /v1/health and the
// case's status answer at once (opening it blocked every /v1/health); the FIFO is refused as
// not a regular file, so the VM reads unclean (accepting no case) until it is removed.
TEST_P(AgentHostile, FifoAtAStateFileDoesNotBlockHealth) {
  ASSERT_TRUE(start());
  const std::vector<fs::path> fifos{state / "unclean.json", state / "cases" / "case-fifo" / "status.json"};
  // Bounded on failure too: an agent blocked opening a FIFO is released (an O_RDWR open
  // counts as a writer) and the FIFOs removed before TearDown stops it.
  struct ReleaseFifos {
    const std::vector<fs::path>& paths;
    ~ReleaseFifos() {
      std::vector<int> fds;
      for (const auto& p : paths) {
        const int fd = ::open(p.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) fds.push_back(fd);
        ::unlink(p.c_str());
      }
      std::this_thread::sleep_for(milliseconds(100));
      for (int fd : fds) ::close(fd);
    }
  } release{fifos};
  fs::create_directories(state / "cases" / "case-fifo");
  for (const auto& f : fifos) ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0) << f;
  auto c = client(false);
  c.set_read_timeout(20, 0);  // a bound for a blocked agent, not a timing claim
  auto h = c.Get("/v1/health");
  ASSERT_TRUE(h) << "no health answer: the agent blocked on the FIFO";
  EXPECT_EQ(h->status, 200);
  const json hj = json::parse(h->body);
  EXPECT_EQ(hj["accepting_cases"], false) << h->body;
  EXPECT_NE(h->body.find("not a regular file"), std::string::npos) << h->body;
  auto s = client().Get("/v1/cases/case-fifo");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->status, 404) << s->body;
  ::unlink(fifos[0].c_str());
  h = c.Get("/v1/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(json::parse(h->body)["accepting_cases"], true) << h->body;
}

// A 32 MiB bundle is streamed, not read whole into memory: 8 downloads that stall after
// their first bytes leave the agent's RSS within 16 MiB of what it was (8 whole copies of
// a 64 MiB bundle were 914 MiB), at most 2 are served at once (the rest: 503 with
// Retry-After), and a download afterwards gets the whole file byte for byte. A small
// bundle asked with 600 ranges comes whole too (the ranges of a large one would have made
// the former agent build 600 copies of it: the test stays bounded on a regression).
TEST_P(AgentHostile, BundleDownloadsAreStreamedAndCapped) {
  make_bundle("case-big");
  {
    results::Db db((dir / "bundles" / "case-big.db").string(), results::Db::Mode::ReadWrite);
    results::Stmt(db, "CREATE TABLE pad(b BLOB)").run();
    results::Stmt(db, "INSERT INTO pad VALUES(zeroblob(32 * 1024 * 1024))").run();
  }
  make_bundle("case-small");
  ASSERT_TRUE(start());
  ASSERT_EQ(post_spec(valid_spec("case-small")), 202);
  ASSERT_EQ(wait_final("case-small")["state"], "completed");
  {
    const std::string small = test_support::slurp(dir / "bundles" / "case-small.db");
    ASSERT_LT(small.size(), 1u << 20);
    const std::string range = many_ranges(600);
    auto r = client().Get("/v1/cases/case-small/bundle", {{"Range", range.substr(7, range.size() - 9)}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(r->body == small) << "600 ranges: " << r->body.size() << " bytes for a " << small.size() << "-byte bundle";
  }
  ASSERT_EQ(post_spec(valid_spec("case-big")), 202);
  ASSERT_EQ(wait_final("case-big")["state"], "completed");
  const std::string want = test_support::slurp(dir / "bundles" / "case-big.db");
  ASSERT_GT(want.size(), 32u << 20);
  ASSERT_EQ(health_status(), 200);
  const long rss0 = rss_kib(pid);
  std::vector<std::unique_ptr<Raw>> slow;
  int ok = 0, busy = 0;
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<Raw>(port, tls, "127.0.0." + std::to_string(20 + i)));
    ASSERT_TRUE(slow.back()->ok());
    ASSERT_TRUE(slow.back()->send(auth_head("GET", "/v1/cases/case-big/bundle") + "\r\n"));
    const std::string line = slow.back()->status_line(seconds(20));
    if (line == "HTTP/1.1 200 OK") ++ok;
    if (line == "HTTP/1.1 503 Service Unavailable") {
      ++busy;
      slow.back()->read_until([&] { return slow.back()->received().find("\r\n\r\n") != std::string::npos; },
                              seconds(20));
      EXPECT_EQ(header_of(slow.back()->received(), "Retry-After"), "1") << slow.back()->received();
    }
  }
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(busy, 6);
  const long rss1 = rss_kib(pid);
  std::printf("agent VmRSS %ld KiB before, %ld KiB with 8 stalled downloads of a %zu-byte bundle\n", rss0, rss1,
              want.size());
  EXPECT_LT(rss1 - rss0, 16 * 1024) << "VmRSS grew from " << rss0 << " to " << rss1 << " KiB";
  slow.clear();  // the stalled downloads end: their slots are freed when the agent's writes fail
  httplib::Response got;
  const bool whole = eventually(
      [&] {
        auto c = client();
        c.set_read_timeout(60, 0);
        auto r = c.Get("/v1/cases/case-big/bundle");
        if (!r || r->status == 503) return false;
        got = *r;
        return true;
      },
      seconds(60));
  ASSERT_TRUE(whole) << "the bundle download stayed refused (503) after the stalled ones ended";
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.get_header_value("Content-Type"), "application/vnd.sqlite3");
  EXPECT_EQ(got.body.size(), want.size());
  EXPECT_TRUE(got.body == want) << "the streamed bundle differs from the file";
}

// ---- answers bounded by what was asked ----------------------------------------------------

/// A spec (of case `id`) padded to `body_bytes` bytes of JSON by `pad`, which receives a
/// string of the missing length made of `unit` (repeated; its bytes count) and puts it in.
std::string spec_of_size(const std::string& id, std::size_t body_bytes, const std::string& unit,
                         const std::function<void(json&, const std::string&)>& pad) {
  json probe = valid_spec(id);
  pad(probe, "");
  const std::size_t base = probe.dump().size();
  std::string fill;
  while (base + fill.size() + unit.size() <= body_bytes) fill += unit;
  json spec = valid_spec(id);
  pad(spec, fill);
  return spec.dump();
}

/// Every answer of `answers` is a 400 of at most 4 KiB, JSON, whose error holds `in_error`
/// (the echoed value's stated length) and whose field begins with `field`.
void expect_bounded_400s(const std::vector<std::pair<int, std::string>>& answers, const std::string& in_error,
                         const std::string& field) {
  ASSERT_FALSE(answers.empty());
  for (const auto& [status, body] : answers) {
    EXPECT_EQ(status, 400) << body.substr(0, 300);
    EXPECT_LT(body.size(), 4096u) << "an error answer of " << body.size() << " bytes: " << body.substr(0, 300);
    const json j = json::parse(body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << body.substr(0, 300);
    ASSERT_TRUE(j["error"].is_string()) << body.substr(0, 300);
    ASSERT_TRUE(j["field"].is_string()) << body.substr(0, 300);
    EXPECT_NE(j["error"].get<std::string>().find(in_error), std::string::npos) << j["error"];
    EXPECT_EQ(j["field"].get<std::string>().rfind(field, 0), 0u) << j["field"];
  }
}

// A 1 MiB spec whose one unknown field name is non-ASCII (U+00E9 repeated): every byte of it
// was quoted as \xNN, twice, then JSON-escaped (answers of 10,475,758 bytes; the agent's
// VmHWM reached 181 MiB in this test). Now the name is refused before the spec is parsed and
// quoted as a short prefix with its length stated, alone and four at once, and the agent's
// peak RSS stays under the table's ceiling (TearDown).
TEST_P(AgentHostile, NonAsciiUnknownFieldNameOfAMegabyteGetsABoundedAnswer) {
  ASSERT_TRUE(start());
  std::size_t name_bytes = 0;
  const std::string body = spec_of_size("case-name", 1 << 20, "\xc3\xa9", [&](json& j, const std::string& s) {
    j["backend"]["x" + s] = 1;
    name_bytes = 1 + s.size();
  });
  ASSERT_LE(body.size(), 1u << 20);
  ASSERT_GT(name_bytes, 1000000u);
  const std::string stated = std::to_string(name_bytes) + " bytes";
  expect_bounded_400s(post_at_once(body, 1), stated, "backend.x");
  expect_bounded_400s(post_at_once(body, 4), stated, "backend.x");
  EXPECT_TRUE(runs().empty());
  EXPECT_EQ(health_status(), 200);
}

// The same with an ASCII name (answers of 2,095,212 bytes; VmHWM 70 MiB in this test).
TEST_P(AgentHostile, AsciiUnknownFieldNameOfAMegabyteGetsABoundedAnswer) {
  ASSERT_TRUE(start());
  std::size_t name_bytes = 0;
  const std::string body = spec_of_size("case-ascii", 1 << 20, "k", [&](json& j, const std::string& s) {
    j["backend"]["x" + s] = 1;
    name_bytes = 1 + s.size();
  });
  ASSERT_LE(body.size(), 1u << 20);
  ASSERT_GT(name_bytes, 1000000u);
  const std::string stated = std::to_string(name_bytes) + " bytes";
  expect_bounded_400s(post_at_once(body, 1), stated, "backend.x");
  expect_bounded_400s(post_at_once(body, 4), stated, "backend.x");
  EXPECT_TRUE(runs().empty());
}

// A 1 MiB `configuration` value, quoted whole in the error (VmHWM 110 MiB in this test): cut
// with its length stated; the field is `configuration`.
TEST_P(AgentHostile, ConfigurationValueOfAMegabyteGetsABoundedAnswer) {
  ASSERT_TRUE(start());
  std::size_t value_bytes = 0;
  const std::string body = spec_of_size("case-conf", 1 << 20, "\xc3\xa9", [&](json& j, const std::string& s) {
    j["configuration"] = "a" + s;
    value_bytes = 1 + s.size();
  });
  ASSERT_LE(body.size(), 1u << 20);
  ASSERT_GT(value_bytes, 1000000u);
  const std::string stated = std::to_string(value_bytes) + " bytes";
  expect_bounded_400s(post_at_once(body, 1), stated, "configuration");
  expect_bounded_400s(post_at_once(body, 4), stated, "configuration");
  EXPECT_TRUE(runs().empty());
}

// ---- no invitation before authentication ----------------------------------------------------

// Expect: 100-continue on a request the agent will refuse unread (no token, a wrong token,
// an unknown path with the token, a body on GET): the refusal comes instead of the
// `100 Continue` (it came first, then the 401), nothing of the body is invited, and the
// connection closes.
TEST_P(AgentHostile, ExpectContinueGetsTheRefusalInsteadOfAny100) {
  ASSERT_TRUE(start());
  std::string wrong = kToken;
  wrong.back() = wrong.back() == 'f' ? 'e' : 'f';
  const std::string expect = "Content-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n";
  const std::vector<std::pair<std::string, std::string>> refused{
      {"POST /v1/cases HTTP/1.1\r\nHost: x\r\n" + expect, "HTTP/1.1 401 Unauthorized"},
      {"POST /v1/cases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + wrong + "\r\n" + expect,
       "HTTP/1.1 401 Unauthorized"},
      {auth_head("POST", "/v1/no-such-path") + expect, "HTTP/1.1 404 Not Found"},
      {auth_head("GET", "/v1/qualification") + expect, "HTTP/1.1 413 Payload Too Large"},
  };
  for (const auto& [head, want] : refused) {
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send(head));
    const std::string all = r.read_until_closed(seconds(10));
    EXPECT_EQ(all.substr(0, all.find("\r\n")), want) << head << "\n" << all;
    EXPECT_EQ(all.find("100 Continue"), std::string::npos) << head << "\n" << all;
    EXPECT_EQ(header_of(all, "Content-Length"), std::to_string(all.size() - all.find("\r\n\r\n") - 4)) << all;
  }
  EXPECT_TRUE(runs().empty());
}

// ---- framing decided at once ---------------------------------------------------------------

// Chunked bodies whose framing breaks RFC 9112 section 7.1: 400 at once, naming the chunk
// problem, and the connection closes (a chunk size of -2 waited for the 30 s body deadline,
// then 408; 0x2 and a leading space were read as sizes; a bare LF passed; a chunk not
// followed by CRLF ended the body and left the rest to be parsed as a next request).
TEST_P(AgentHostile, MalformedChunkFramingGets400AtOnce) {
  ASSERT_TRUE(start());
  const std::vector<std::pair<std::string, std::string>> framings{
      {"-2\r\n", "size -2"},
      {"0x2\r\nab\r\n0\r\n\r\n", "size 0x2"},
      {" 2\r\nab\r\n0\r\n\r\n", "size with a leading space"},
      {"2\nab\r\n0\r\n\r\n", "bare LF after a chunk size"},
      {"2\r\nab\n0\r\n\r\n", "bare LF after chunk data"},
      {"2\r\nabXY\r\n0\r\n\r\n", "chunk data longer than its size"},
      {"0\n\r\n", "bare LF after the last chunk"},
      {"0\r\nX-Trailer: 1\r\n\r\n", "a trailer field"},
      {"2 \r\nab\r\n0\r\n\r\n", "space after a chunk size"},
      {"11111111111111111\r\n", "a 17-digit chunk size"},
  };
  for (const auto& [chunks, what] : framings) {
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases") + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                       chunks));
    const auto t0 = Clock::now();
    const std::string line = r.status_line(seconds(10));  // the body deadline is 30 s
    const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
    EXPECT_EQ(line, "HTTP/1.1 400 Bad Request") << what << ": after " << took << " ms: " << r.received();
    EXPECT_TRUE(r.closed_within(seconds(5))) << what;
    EXPECT_NE(r.received().find("malformed chunked body (RFC 9112 section 7.1): "), std::string::npos)
        << what << ": " << r.received();
  }
  // A well-formed chunked body (an extension, upper-case hex) and a request pipelined after
  // it: both answered.
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases/case-none/cancel") +
                     "Transfer-Encoding: chunked\r\n\r\n2;note=x\r\n{}\r\nA\r\n0123456789\r\n0\r\n\r\n"
                     "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string all = r.read_until_closed(seconds(10));
  EXPECT_EQ(all.rfind("HTTP/1.1 404 Not Found", 0), 0u) << all;
  EXPECT_NE(all.find("HTTP/1.1 200 OK"), std::string::npos) << all;
  EXPECT_TRUE(runs().empty());
}

// A POST with neither Content-Length nor Transfer-Encoding has an empty body (RFC 9112
// section 6.3) and is judged at once (it waited for the 30 s body deadline, then 408): the
// case spec is malformed JSON (400), and a request pipelined after it is answered.
TEST_P(AgentHostile, PostWithoutFramingHasAnEmptyBodyJudgedAtOnce) {
  ASSERT_TRUE(start());
  Raw r(port, tls);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases") + "Content-Type: application/json\r\n\r\n"));
  EXPECT_EQ(r.status_line(seconds(10)), "HTTP/1.1 400 Bad Request") << r.received();
  r.read_until([&] { return r.received().find("malformed JSON") != std::string::npos; }, seconds(10));
  EXPECT_NE(r.received().find("malformed JSON"), std::string::npos) << r.received();
  ASSERT_TRUE(r.send("GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string all = r.read_until_closed(seconds(10));
  EXPECT_NE(all.find("HTTP/1.1 200 OK"), std::string::npos) << all;
  EXPECT_TRUE(runs().empty());
}

/// `s` with every byte written as %XX.
std::string percent_encoded(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string o;
  for (unsigned char c : s) o += std::string("%") + hex[c >> 4] + hex[c & 15];
  return o;
}

// A header value holding '%' is refused (400, naming the header): the HTTP library decodes
// %XX in header values, so a percent-encoded bearer token was accepted and a
// percent-encoded Expect invited a body. The token written plainly is still accepted.
TEST_P(AgentHostile, PercentEncodedHeaderValuesAreRefused) {
  ASSERT_TRUE(start());
  const std::string token(kToken);
  for (const std::string& auth : {"Bearer " + percent_encoded(token), "Bearer " + percent_encoded(token.substr(0, 1)) +
                                                                          token.substr(1)}) {
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send("GET /v1/qualification HTTP/1.1\r\nHost: x\r\nAuthorization: " + auth + "\r\n\r\n"));
    const std::string all = r.read_until_closed(seconds(10));
    EXPECT_EQ(all.substr(0, all.find("\r\n")), "HTTP/1.1 400 Bad Request") << auth << "\n" << all;
    EXPECT_NE(all.find("Authorization"), std::string::npos) << all;
  }
  {
    Raw r(port, tls);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.send(auth_head("POST", "/v1/cases") + "Content-Length: 100\r\nExpect: %31%30%30-continue\r\n\r\n"));
    const std::string all = r.read_until_closed(seconds(10));
    EXPECT_EQ(all.substr(0, all.find("\r\n")), "HTTP/1.1 400 Bad Request") << all;
    EXPECT_EQ(all.find("100 Continue"), std::string::npos) << all;
  }
  auto ok = client().Get("/v1/qualification");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

INSTANTIATE_TEST_SUITE_P(Transport, AgentHostile, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Tls" : "PlainHttp"; });

}  // namespace
