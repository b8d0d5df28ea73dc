// AgentClient against a fake agent on 127.0.0.1: typed errors with clear messages,
// GET retried with backoff, POST never retried.
#include "harness/agent/client/client.hpp"

#include "tests/common/fake_agent.hpp"
#include "tests/common/valid_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <httplib.h>

#include <mutex>
#include <set>
#include <thread>

#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

using ::testing::HasSubstr;
namespace ha = harness::agent;

namespace {

/// A port on 127.0.0.1 with nothing listening (bound, then closed).
int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

ha::ClientOptions fast() {
  ha::ClientOptions o;
  o.backoff = std::chrono::milliseconds(10);
  o.get_attempts = 3;
  return o;
}

/// A spec the agent accepts (the fake refuses what the agent refuses: harness::agent::check_submitted_spec).
nlohmann::json spec(const std::string& id) { return test_support::valid_spec(id, "t"); }

}  // namespace

TEST(AgentClient, UnreachableSaysConnectionRefused) {
  const std::string url = "http://127.0.0.1:" + std::to_string(closed_port());
  ha::AgentClient c(url, "t", "/x/token", fast());
  const auto r = c.health();
  ASSERT_FALSE(r.ok()) << "no error";
  EXPECT_EQ(r.failure().kind, ha::FailureKind::Unreachable);
  EXPECT_THAT(r.message(), HasSubstr("agent at " + url + " unreachable (connection refused)"));
  EXPECT_EQ(r.failure().http_status, 0);
}

TEST(AgentClient, UnauthorisedNamesTheTokenFile) {
  fake::FakeAgent agent("/tmp/fake-agent-client-a", "right");
  ha::AgentClient c(agent.url(), "wrong", "/etc/harness/token", fast());
  EXPECT_EQ(c.health().value().at("status"), "ok");  // health needs no token
  const auto r = c.submit(spec("a"));
  ASSERT_FALSE(r.ok()) << "no error";
  EXPECT_EQ(r.failure().kind, ha::FailureKind::Unauthorised);
  EXPECT_EQ(r.failure().http_status, 401);
  EXPECT_THAT(r.message(), HasSubstr("unauthorised (401): check token file /etc/harness/token"));
}

TEST(AgentClient, SubmitStatusBundleAndTypedConflicts) {
  fake::FakeAgent agent("/tmp/fake-agent-client-b", "tok");
  agent.polls_to_finish = 1;
  ha::AgentClient c(agent.url(), "tok", "", fast());
  EXPECT_EQ(c.submit(spec("case-1")).value(), "case-1");
  EXPECT_EQ(c.submit(spec("case-1")).failure().kind, ha::FailureKind::Conflict);  // id already used: 409
  EXPECT_EQ(c.status("nope").failure().kind, ha::FailureKind::NotFound);
  const auto early = c.download_bundle("case-1", "/tmp/fake-agent-client-b/x.db");  // not finished
  EXPECT_EQ(early.failure().kind, ha::FailureKind::Conflict);
  EXPECT_FALSE(std::filesystem::exists("/tmp/fake-agent-client-b/x.db"));
  EXPECT_FALSE(std::filesystem::exists("/tmp/fake-agent-client-b/x.db.part"));
  EXPECT_EQ(c.status("case-1").value().state, "running");
  const auto st = c.status("case-1").value();
  EXPECT_EQ(st.state, "completed");
  EXPECT_TRUE(st.finished());
  ASSERT_TRUE(c.download_bundle("case-1", "/tmp/fake-agent-client-b/dl.db").ok());
  results::Db db("/tmp/fake-agent-client-b/dl.db", results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT status FROM cases WHERE case_id = 'case-1'");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.text(0), "completed");
  const auto rejected = c.submit(nlohmann::json{{"campaign", "t"}});
  ASSERT_FALSE(rejected.ok()) << "no error";
  EXPECT_EQ(rejected.failure().kind, ha::FailureKind::Rejected);
  EXPECT_EQ(rejected.failure().field, "case_id");
  EXPECT_THAT(rejected.message(), HasSubstr("bad request (400)"));
  // Reading a failed reply as a success is the caller's broken invariant, said with the failure.
  try {
    (void)rejected.value();
    ADD_FAILURE() << "value() of a failure returned";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad request (400)"));
  }
  EXPECT_THROW((void)c.submit(spec("case-2")).failure(), std::logic_error);  // failure() of a success
  EXPECT_THROW((void)c.status("../etc"), std::invalid_argument);  // never sent
  std::filesystem::remove_all("/tmp/fake-agent-client-b");
}

// DELETE /v1/unclean: the cleared mark, or NotFound when the VM was not marked.
TEST(AgentClient, ClearUncleanReturnsTheMarkOrNotFound) {
  fake::FakeAgent agent("/tmp/fake-agent-client-e", "tok");
  agent.unclean = {{"case_id", "c1"}, {"problems", {"zram1 still swapped on"}}};
  ha::AgentClient c(agent.url(), "tok", "", fast());
  const auto rejected = c.submit(spec("after-mark"));
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.failure().kind, ha::FailureKind::NotQualified);
  EXPECT_THAT(rejected.message(), HasSubstr("unclean_restoration: VM unusable: the restoration of case c1 was unclean"));
  const auto cleared = c.clear_unclean();
  ASSERT_TRUE(cleared.ok()) << cleared.message();
  EXPECT_EQ(cleared.value().value("case_id", ""), "c1");
  EXPECT_TRUE(c.health().value()["unclean"].is_null());
  const auto again = c.clear_unclean();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.failure().kind, ha::FailureKind::NotFound);
  EXPECT_THAT(again.message(), HasSubstr("not found (404): the VM is not marked unclean"));
  EXPECT_EQ(c.submit(spec("after-clear")).value(), "after-clear");
  std::filesystem::remove_all("/tmp/fake-agent-client-e");
}

TEST(AgentClient, GetRetriedPostNot) {
  fake::FakeAgent agent("/tmp/fake-agent-client-c", "tok");
  ha::AgentClient c(agent.url(), "tok", "", fast());
  ASSERT_TRUE(c.submit(spec("r1")).ok());
  agent.status_503_left = 2;  // two 503s, then the answer: 3 tries suffice
  const int before = agent.gets();
  EXPECT_EQ(c.status("r1").value().case_id, "r1");
  EXPECT_EQ(agent.gets() - before, 3);
  agent.status_503_left = 5;  // more than the attempts: the 503 surfaces
  const auto unavailable = c.status("r1");
  ASSERT_FALSE(unavailable.ok()) << "no error";
  EXPECT_EQ(unavailable.failure().kind, ha::FailureKind::OtherStatus);
  EXPECT_EQ(unavailable.failure().http_status, 503);
  // POST: one request even on failure (409 here), never repeated.
  const int posts = agent.posts();
  EXPECT_EQ(c.submit(spec("r1")).failure().kind, ha::FailureKind::Conflict);
  EXPECT_EQ(agent.posts() - posts, 1);
  std::filesystem::remove_all("/tmp/fake-agent-client-c");
}

/// Requests of one client, and of its copies, reuse one connection to the agent (so the
/// runner's 1 Hz polls cost the agent no new connection, thread or TLS handshake each): the
/// server sees every request come from the same client port.
TEST(AgentClient, RequestsReuseOneConnection) {
  httplib::Server srv;
  std::mutex mu;
  std::set<int> ports;
  int requests = 0;
  srv.Get("/v1/health", [&](const httplib::Request& req, httplib::Response& res) {
    {
      std::lock_guard<std::mutex> lk(mu);
      ports.insert(req.remote_port);
      ++requests;
    }
    res.set_content(R"({"status":"ok","busy":false})", "application/json");
  });
  srv.set_keep_alive_max_count(100);  // httplib closes after 5 by default; the agent after 100
  const int port = srv.bind_to_any_port("127.0.0.1");
  std::thread t([&] { srv.listen_after_bind(); });
  while (!srv.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    ha::AgentClient c("http://127.0.0.1:" + std::to_string(port), "tok", "", fast());
    for (int i = 0; i < 5; ++i) EXPECT_EQ(c.health().value()["status"], "ok");
    ha::AgentClient copy = c;
    EXPECT_EQ(copy.health().value()["status"], "ok");
  }
  srv.stop();
  t.join();
  EXPECT_EQ(requests, 6);
  EXPECT_EQ(ports.size(), 1u) << "each request opened a connection of its own";
}

TEST(AgentClient, TokenFileReadAndTrimmed) {
  const std::string f = "/tmp/fake-agent-client-token";
  {
    std::ofstream o(f);
    o << "tok\n";
  }
  std::filesystem::permissions(f, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  fake::FakeAgent agent("/tmp/fake-agent-client-d", "tok");
  auto c = ha::AgentClient::from_token_file(agent.url(), f, fast());
  EXPECT_EQ(c.submit(spec("t1")).value(), "t1");
  EXPECT_THROW(ha::AgentClient::from_token_file(agent.url(), "/nonexistent/token"), std::runtime_error);
  std::filesystem::remove(f);
  std::filesystem::remove_all("/tmp/fake-agent-client-d");
}

// The agent's rule for its own token file, on the client's side too: a token group or others
// may read is refused before any request, naming the file, its mode and the fix.
TEST(AgentClient, TokenFileOthersMayReadIsRefused) {
  const std::string f = "/tmp/fake-agent-client-token-0644";
  {
    std::ofstream o(f);
    o << "tok\n";
  }
  for (const auto mode : {0644, 0640, 0604}) {
    std::filesystem::permissions(f, static_cast<std::filesystem::perms>(mode), std::filesystem::perm_options::replace);
    try {
      ha::AgentClient::from_token_file("http://127.0.0.1:1", f, fast());
      ADD_FAILURE() << "mode " << std::oct << mode << " accepted";
    } catch (const std::runtime_error& e) {
      char m[8];
      std::snprintf(m, sizeof m, "%04o", static_cast<unsigned>(mode));
      EXPECT_THAT(e.what(), HasSubstr("token file " + f + ": mode " + m + " lets group/others read it; must be 0600 "
                                      "(chmod 600 " + f + ")"));
    }
  }
  std::filesystem::permissions(f, std::filesystem::perms::owner_read, std::filesystem::perm_options::replace);
  EXPECT_NO_THROW(ha::AgentClient::from_token_file("http://127.0.0.1:1", f, fast()));  // 0400 is fine
  std::filesystem::remove(f);
}
