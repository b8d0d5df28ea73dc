// Security and behaviour of a real `harness agent` process on 127.0.0.1: missing token,
// wrong token, oversized body, malformed spec, concurrent submission, path tricks in case
// ids, unqualified host, cancel, executor death.
// The executor is a tiny script (--executor, a documented test override) that appends a
// line to a marker file when it runs, so every rejected request is checked to have run
// nothing. No timing assertions: waits poll with generous deadlines.
#include "harness/agent/client/client.hpp"
#include "harness/agent/routes/server.hpp"
#include "harness/agent/client/tls_pin.hpp"
#include "results/db.hpp"
#include "tests/common/agent_support.hpp"
#include "tests/common/slurp.hpp"
#include "tests/unit/agent/agent_fixture.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using namespace agent_test;

/// Every security and behaviour test below runs twice: plain HTTP and TLS (the
/// security tests must pass over TLS too).
class AgentProcess : public AgentFixture, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    tls = GetParam();
  }
};

TEST_P(AgentProcess, HealthNeedsNoTokenAndReportsIdle) {
  ASSERT_TRUE(start());
  auto r = client(false).Get("/v1/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto j = json::parse(r->body);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["busy"], false);
  EXPECT_TRUE(j.contains("source_commit"));
}

TEST_P(AgentProcess, MissingTokenGets401AndRunsNothing) {
  ASSERT_TRUE(start());
  auto c = client(false);
  auto r = c.Post("/v1/cases", valid_spec("case-a").dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(json::parse(r->body)["error"], "missing or wrong bearer token");
  auto q = c.Get("/v1/qualification");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->status, 401);
  auto s = c.Get("/v1/cases/case-a");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->status, 401);
  EXPECT_TRUE(runs().empty());
  EXPECT_FALSE(fs::exists(state / "cases" / "case-a"));
}

TEST_P(AgentProcess, WrongTokenGets401AndRunsNothing) {
  ASSERT_TRUE(start());
  std::string wrong = kToken;
  wrong.back() = wrong.back() == 'f' ? 'e' : 'f';
  for (const std::string& t : {wrong, std::string(kToken) + "x", std::string("short"), std::string("")}) {
    auto r = client(true, t).Post("/v1/cases", valid_spec("case-a").dump(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << "token '" << t << "'";
  }
  // Token without the Bearer scheme, or lower-case scheme
  auto c = client(false);
  for (const std::string& h : {std::string(kToken), std::string("bearer ") + kToken, std::string("Basic ") + kToken}) {
    auto r = c.Post("/v1/cases", {{"Authorization", h}}, valid_spec("case-a").dump(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << h;
  }
  EXPECT_TRUE(runs().empty());
  EXPECT_FALSE(fs::exists(state / "cases" / "case-a"));
}

TEST_P(AgentProcess, OversizedBodyGets413AndRunsNothing) {
  ASSERT_TRUE(start("qualify-ok.sh", nullptr, {"--max-body-bytes", "4096"}));
  json spec = valid_spec("case-big");
  spec["padding"] = std::string(8192, 'x');
  auto r = client().Post("/v1/cases", spec.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(runs().empty());
  EXPECT_FALSE(fs::exists(state / "cases" / "case-big"));
  // A normal-sized valid spec is accepted (the limit was the only reason).
  auto ok = client().Post("/v1/cases", valid_spec("case-small").dump(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 202) << ok->body;
}

TEST_P(AgentProcess, DefaultLimitIsOneMiB) {
  ASSERT_TRUE(start());
  auto r = client().Post("/v1/cases", std::string((1 << 20) + 1, ' '), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(runs().empty());
}

// The limit holds on the bytes received, whatever the headers say (chunked bodies too, which
// were once read whole and started): 413 (or 408 for a slow drip), and nothing written in the
// state directory, nothing run.
TEST_P(AgentProcess, ChunkedFiftyMegabyteBodyGets413AndWritesNothing) {
  ASSERT_TRUE(start());
  const std::string head = std::string("POST /v1/cases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + kToken +
                           "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked";
  EXPECT_EQ(raw(head, chunked_body(50u << 20)), "HTTP/1.1 413 Payload Too Large");
  EXPECT_TRUE(runs().empty());
  EXPECT_TRUE(fs::is_empty(state / "cases"));
}

// A POST without Content-Length or Transfer-Encoding has no body (RFC 9112 section 6.3): its
// case spec is empty (400 at once), and the 5 MiB sent after its head are never read as its
// body (they were, until the limit: 413) but as the next request's head (431, closed);
// nothing written, nothing run.
TEST_P(AgentProcess, FiveMegabytesAfterAPostWithoutALengthAreNotItsBody) {
  ASSERT_TRUE(start());
  const std::string head = std::string("POST /v1/cases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + kToken +
                           "\r\nContent-Type: application/json";
  EXPECT_EQ(raw(head, std::vector<std::string>(5, std::string(1 << 20, 'x'))), "HTTP/1.1 400 Bad Request");
  EXPECT_TRUE(runs().empty());
  EXPECT_TRUE(fs::is_empty(state / "cases"));
}

TEST_P(AgentProcess, SlowDripBodyGets408AndWritesNothing) {
  ASSERT_TRUE(start("qualify-ok.sh", nullptr, {"--body-deadline-s", "2"}));
  const auto spec = valid_spec("case-drip").dump();
  const std::string head = std::string("POST /v1/cases HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + kToken +
                           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(spec.size());
  std::vector<std::string> drip;
  for (std::size_t i = 0; i < spec.size() && i < 40; ++i) drip.push_back(spec.substr(i, 1));  // never completes
  EXPECT_EQ(raw(head, drip, std::chrono::milliseconds(100)), "HTTP/1.1 408 Request Timeout");
  EXPECT_TRUE(runs().empty());
  EXPECT_TRUE(fs::is_empty(state / "cases"));
}

TEST_P(AgentProcess, BodyOnAGetIsRefused) {
  ASSERT_TRUE(start());
  const std::string head = std::string("GET /v1/qualification HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") +
                           kToken + "\r\nTransfer-Encoding: chunked";
  EXPECT_EQ(raw(head, chunked_body(3u << 20)), "HTTP/1.1 413 Payload Too Large");
}

TEST_P(AgentProcess, MalformedSpecGets400NamingTheFieldAndRunsNothing) {
  ASSERT_TRUE(start());
  auto c = client();
  auto r = c.Post("/v1/cases", "{not json", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);

  json bad = valid_spec("case-bad");
  bad["phases_s"]["pressure"] = 0;
  r = c.Post("/v1/cases", bad.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  auto j = json::parse(r->body);
  ASSERT_TRUE(j["field"].is_string()) << r->body;
  EXPECT_NE(j["field"].get<std::string>().find("pressure"), std::string::npos) << r->body;

  json unknown = valid_spec("case-bad2");
  unknown["surprise"] = 1;
  r = c.Post("/v1/cases", unknown.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("surprise"), std::string::npos) << r->body;

  json missing = valid_spec("case-bad3");
  missing.erase("dose_bytes");
  r = c.Post("/v1/cases", missing.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("dose_bytes"), std::string::npos) << r->body;

  EXPECT_TRUE(runs().empty());
  EXPECT_TRUE(fs::is_empty(state / "cases"));
}

TEST_P(AgentProcess, ConcurrentSubmissionGets409WhileTheFirstRuns) {
  { std::ofstream(dir / "sleep_s") << "3"; }
  make_bundle("case-a");
  ASSERT_TRUE(start());
  auto c = client();
  auto a = c.Post("/v1/cases", valid_spec("case-a").dump(), "application/json");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, 202) << a->body;
  EXPECT_EQ(json::parse(a->body)["case_id"], "case-a");
  auto b = c.Post("/v1/cases", valid_spec("case-b").dump(), "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->status, 409) << b->body;
  auto h = json::parse(c.Get("/v1/health")->body);
  EXPECT_EQ(h["busy"], true);
  // bundle of a running case: 409
  auto early = c.Get("/v1/cases/case-a/bundle");
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 409);
  json fin = wait_final("case-a");
  EXPECT_EQ(fin["state"], "completed") << fin.dump();
  EXPECT_EQ(fin["phase"], "done");
  EXPECT_EQ(runs(), std::vector<std::string>{"case-a"});  // case-b never ran
  // download and open the bundle
  auto bun = c.Get("/v1/cases/case-a/bundle");
  ASSERT_TRUE(bun);
  ASSERT_EQ(bun->status, 200);
  EXPECT_EQ(bun->get_header_value("Content-Type"), "application/vnd.sqlite3");
  fs::path got = dir / "got.db";
  { std::ofstream(got, std::ios::binary) << bun->body; }
  results::Db db(got.string(), results::Db::Mode::ReadOnly);
  results::Stmt st(db, "SELECT status FROM cases");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "completed");
  // same id again: 409 (ids are never reused), still one run
  auto again = c.Post("/v1/cases", valid_spec("case-a").dump(), "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 409);
  EXPECT_EQ(runs().size(), 1u);
}

TEST_P(AgentProcess, PathTricksInCaseIdsGet400AndTouchNothing) {
  ASSERT_TRUE(start());
  auto c = client();
  // ids inside URL paths (percent-encoded so the client does not normalise them)
  for (const std::string& p : std::vector<std::string>{"/v1/cases/..", "/v1/cases/%2e%2e", "/v1/cases/..%2f..%2fetc%2fpasswd", "/v1/cases/a%2fb",
        "/v1/cases/%2e%2e/bundle", "/v1/cases/..%2ftoken/bundle", "/v1/cases/a%00b", "/v1/cases/a%20b",
        "/v1/cases/" + std::string(129, 'x'), "/v1/cases/", "/v1/cases//bundle"}) {
    auto r = c.Get(p.c_str());
    ASSERT_TRUE(r) << p;
    EXPECT_EQ(r->status, 400) << p << " -> " << r->body;
  }
  auto r = c.Post("/v1/cases/..%2f..%2fx/cancel", "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  // ids inside a submitted spec
  for (const std::string& id : std::vector<std::string>{"../evil", "..", ".", "a/b", "/etc/passwd", std::string(129, 'y'), std::string("")}) {
    auto s = c.Post("/v1/cases", valid_spec(id).dump(), "application/json");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->status, 400) << id << " -> " << s->body;
  }
  EXPECT_TRUE(runs().empty());
  EXPECT_TRUE(fs::is_empty(state / "cases"));
  EXPECT_FALSE(fs::exists(state / "evil"));
  EXPECT_FALSE(fs::exists(dir / "evil"));
  // unknown but valid id: 404
  auto u = c.Get("/v1/cases/no-such-case");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->status, 404);
}

TEST_P(AgentProcess, UnqualifiedHostGets412WithReasonsAndRunsNothing) {
  ASSERT_TRUE(start("qualify-bad.sh"));
  auto c = client();
  auto r = c.Post("/v1/cases", valid_spec("case-q").dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 412);
  auto j = json::parse(r->body);
  ASSERT_TRUE(j["reasons"].is_array());
  ASSERT_FALSE(j["reasons"].empty());
  EXPECT_NE(j["reasons"][0].get<std::string>().find("memory_reclaim"), std::string::npos);
  EXPECT_TRUE(runs().empty());
  auto q = c.Get("/v1/qualification");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->status, 200);
  EXPECT_EQ(json::parse(q->body)["passed"], false);
  // the id was not consumed and the agent is not left busy
  EXPECT_EQ(json::parse(c.Get("/v1/health")->body)["busy"], false);
  EXPECT_EQ(c.Get("/v1/cases/case-q")->status, 404);
}

// Cancel of an executor that ignores SIGTERM and has a child in its process group that
// ignores it too: the agent must follow with SIGKILL after --cancel-grace-s (5 s) and
// the whole group must be gone.
TEST_P(AgentProcess, CancelKillsTheProcessGroupWithSigkillAfterAnIgnoredSigterm) {
  write_exec(dir / "executor.sh",
             "#!/bin/sh\n"
             "trap '' TERM\n"  // ignored: inherited by the child below
             "echo $$ > " + (dir / "executor.pid").string() + "\n"
             "echo \"$(basename \"$(dirname \"$4\")\")\" >> " + marker.string() + "\n"
             "echo pressure > \"$4/phase\"\n"
             "sleep 300 &\n"
             "echo $! > " + (dir / "child.pid").string() + "\n"
             "while :; do sleep 1; done\n");
  ASSERT_TRUE(start());
  auto c = client();
  auto a = c.Post("/v1/cases", valid_spec("case-c").dump(), "application/json");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, 202);
  const pid_t exec_pid = read_pid(dir / "executor.pid");
  const pid_t child_pid = read_pid(dir / "child.pid");
  ASSERT_GT(exec_pid, 0);
  ASSERT_GT(child_pid, 0);
  ASSERT_EQ(getpgid(exec_pid), exec_pid) << "the executor runs in its own process group";
  ASSERT_EQ(getpgid(child_pid), exec_pid);
  auto s = json::parse(c.Get("/v1/cases/case-c")->body);
  EXPECT_EQ(s["state"], "running");
  EXPECT_EQ(s["phase"], "pressure");  // read from the executor's out/phase file
  const auto t_cancel = std::chrono::steady_clock::now();
  auto k = c.Post("/v1/cases/case-c/cancel", "", "application/json");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->status, 202);
  // Within the grace the SIGTERM is ignored: the group is still alive after 2 s.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // (executor + sleep 300, and at times its `sleep 1`)
  EXPECT_GE(live_group_members(exec_pid).size(), 2u) << "SIGTERM is ignored; only SIGKILL may end them";
  json fin = wait_final("case-c", 60);
  const auto waited = std::chrono::steady_clock::now() - t_cancel;
  EXPECT_EQ(fin["state"], "cancelled") << fin.dump();
  EXPECT_EQ(fin["exit_code"], 128 + SIGKILL) << fin.dump();  // killed by SIGKILL, not TERM
  EXPECT_GE(waited, std::chrono::seconds(4)) << "SIGKILL came before the 5 s grace";
  for (int i = 0; i < 50 && !live_group_members(exec_pid).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(live_group_members(exec_pid).empty()) << "process group " << exec_pid << " survived the cancel";
  ::kill(-exec_pid, SIGKILL);
  EXPECT_EQ(c.Get("/v1/cases/case-c/bundle")->status, 404);
}

// Cancel of an executor that exits on SIGTERM but leaves a child that ignores it: the
// group must still be gone (the agent must not stop at the group leader).
TEST_P(AgentProcess, CancelLeavesNoProcessOfTheGroupWhenTheLeaderExitsOnSigterm) {
  write_exec(dir / "executor.sh",
             "#!/bin/sh\n"
             "echo $$ > " + (dir / "executor.pid").string() + "\n"
             "echo \"$(basename \"$(dirname \"$4\")\")\" >> " + marker.string() + "\n"
             "(trap '' TERM; exec sleep 300) &\n"
             "echo $! > " + (dir / "child.pid").string() + "\n"
             "while :; do sleep 1; done\n");
  ASSERT_TRUE(start());
  auto c = client();
  ASSERT_EQ(c.Post("/v1/cases", valid_spec("case-g").dump(), "application/json")->status, 202);
  const pid_t exec_pid = read_pid(dir / "executor.pid");
  ASSERT_GT(read_pid(dir / "child.pid"), 0);
  ASSERT_GE(live_group_members(exec_pid).size(), 2u);
  ASSERT_EQ(c.Post("/v1/cases/case-g/cancel", "", "application/json")->status, 202);
  json fin = wait_final("case-g", 60);
  EXPECT_EQ(fin["state"], "cancelled") << fin.dump();
  for (int i = 0; i < 100 && !live_group_members(exec_pid).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(live_group_members(exec_pid).empty()) << "a TERM-ignoring child of the cancelled executor survived";
  ::kill(-exec_pid, SIGKILL);  // leave nothing behind whatever the verdict
}

TEST_P(AgentProcess, ExecutorDeathWithoutBundleIsInfraFailed) {
  { std::ofstream(dir / "no_bundle") << "1"; }
  ASSERT_TRUE(start());
  auto c = client();
  auto a = c.Post("/v1/cases", valid_spec("case-d").dump(), "application/json");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, 202);
  json fin = wait_final("case-d");
  EXPECT_EQ(fin["state"], "infra_failed") << fin.dump();
  EXPECT_NE(fin["error"].get<std::string>().find("without writing a bundle"), std::string::npos);
  EXPECT_EQ(fin["exit_code"], 3);
}

// The executor's own failure after the pressure phase started: its bundle says lost, and so
// does the case's state (the runner imports it as that outcome, never reruns it).
TEST_P(AgentProcess, ALostBundleIsStateLostWithItsBundle) {
  make_bundle("case-l", "lost");
  ASSERT_TRUE(start());
  ASSERT_EQ(client().Post("/v1/cases", valid_spec("case-l").dump(), "application/json")->status, 202);
  const json fin = wait_final("case-l");
  EXPECT_EQ(fin["state"], "lost") << fin.dump();
  EXPECT_EQ(client().Get("/v1/cases/case-l/bundle")->status, 200);
}

TEST_P(AgentProcess, StatusSurvivesAgentRestart) {
  make_bundle("case-r");
  ASSERT_TRUE(start());
  ASSERT_EQ(client().Post("/v1/cases", valid_spec("case-r").dump(), "application/json")->status, 202);
  EXPECT_EQ(wait_final("case-r")["state"], "completed");
  stop();
  ASSERT_TRUE(start());
  auto s = client().Get("/v1/cases/case-r");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->status, 200);
  EXPECT_EQ(json::parse(s->body)["state"], "completed");
  EXPECT_EQ(client().Get("/v1/cases/case-r/bundle")->status, 200);
  EXPECT_EQ(client().Post("/v1/cases", valid_spec("case-r").dump(), "application/json")->status, 409);
}

// POST /v1/reboot: authenticated, refused without --allow-reboot and
// while a case runs; accepted, it runs the reboot (here a test command) after answering.
TEST_P(AgentProcess, RebootNeedsTokenAndPermission) {
  ASSERT_TRUE(start());
  EXPECT_EQ(client(false).Post("/v1/reboot", "", "application/json")->status, 401);
  auto r = client().Post("/v1/reboot", "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("--allow-reboot"), std::string::npos) << r->body;
  auto h = client(false).Get("/v1/health");
  ASSERT_TRUE(h);
  EXPECT_FALSE(json::parse(h->body).value("boot_id", std::string()).empty()) << h->body;
}

// A body-less POST without Content-Length (what `curl -X POST` sends) has no body (RFC
// 9112 section 6.3): the reboot endpoint answers at once instead of waiting for a body.
// Over TLS only: raw_request half-closes a plain connection after the head, and httplib
// drops a request whose client has half-closed before it is routed (the connection then
// looks dead), which says nothing about body framing. Over TLS the connection stays open,
// so without the fix the agent waits for a body until its read timeout and answers 400.
TEST_F(AgentFixture, BodylessPostWithoutALengthIsAnsweredAtOnce) {
  tls = true;
  ASSERT_TRUE(start("qualify-ok.sh", nullptr, {"--reboot-cmd", "true"}));
  const std::string head = std::string("POST /v1/reboot HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + kToken;
  // No --allow-reboot: 403 (not the 400 of a body read that timed out).
  EXPECT_EQ(raw(head, {}), "HTTP/1.1 403 Forbidden");
}

TEST_P(AgentProcess, RebootRunsAfterTheAnswerAndNotDuringACase) {
  const fs::path rebooted = dir / "rebooted";
  ASSERT_TRUE(start("qualify-ok.sh", nullptr,
                    {"--allow-reboot", "--reboot-cmd", "echo reboot >> " + rebooted.string()}));
  // While a case runs: 409, nothing rebooted.
  { std::ofstream(dir / "sleep_s") << "3"; }
  make_bundle("case-busy");
  ASSERT_EQ(client().Post("/v1/cases", valid_spec("case-busy").dump(), "application/json")->status, 202);
  auto busy = client().Post("/v1/reboot", "", "application/json");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 409) << busy->body;
  EXPECT_EQ(wait_final("case-busy")["state"], "completed");
  EXPECT_FALSE(fs::exists(rebooted));
  // Idle: 202 with the boot id, then the reboot command runs once.
  auto ok = client().Post("/v1/reboot", "", "application/json");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 202) << ok->body;
  const std::string boot = json::parse(ok->body).value("boot_id", std::string());
  EXPECT_FALSE(boot.empty());
  // The shell creates the file (>>) before echo writes to it: wait for the whole line.
  auto text = [&] {
    std::ifstream in(rebooted);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::string all;
  for (int i = 0; i < 200 && (all = text()).find('\n') == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(rebooted));
  // The agent is idle again only once its reboot thread returned from the command: no second
  // run can come after that (a 60 s deadline fails the test).
  bool idle = false;
  for (auto t0 = std::chrono::steady_clock::now(); !idle && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60);) {
    auto h = client(false).Get("/v1/health");
    idle = h && h->status == 200 && !json::parse(h->body).value("busy", true);
    if (!idle) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(idle) << "the agent still reports busy 60 s after the reboot command ran";
  EXPECT_EQ(text(), "reboot\n");
  // The host did not really reboot: a client waiting for a new boot id gives up and says so.
  harness::agent::ClientOptions o;
  o.get_attempts = 1;
  if (tls) o.tls_ca_file = (dir / "agent.pem").string();
  harness::agent::AgentClient cl(std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port), kToken,
                                 token_file.string(), o);
  const auto r = cl.reboot_and_wait(std::chrono::seconds(2), std::chrono::milliseconds(200));
  ASSERT_FALSE(r.ok()) << "reboot_and_wait returned without a new boot id";
  EXPECT_EQ(r.failure().kind, harness::agent::FailureKind::Unreachable);
  EXPECT_NE(r.message().find("did not come back with a new boot id"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find(boot), std::string::npos) << r.message();
}

TEST_P(AgentProcess, RefusesTokenFileReadableByOthers) {
  chmod(token_file.c_str(), 0644);
  std::string out;
  EXPECT_FALSE(start("qualify-ok.sh", &out));
  EXPECT_NE(out.find("0600"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Transport, AgentProcess, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Tls" : "PlainHttp"; });

// ---- TLS transport (the token never crosses a network in clear text) ------------------

/// The pin computed by the openssl CLI, independently of spki_pin_sha256.
std::string openssl_pin(const fs::path& cert) {
  const std::string cmd = "openssl x509 -in " + cert.string() +
                          " -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | "
                          "openssl base64 -A";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  return "sha256//" + out;
}

TEST_F(AgentFixture, PinMatchesOpensslAndTheAgentPrintsIt) {
  tls = true;
  std::string out;
  ASSERT_TRUE(start("qualify-ok.sh", &out));
  const std::string pin = harness::agent::spki_pin_sha256((dir / "agent.pem").string());
  EXPECT_EQ(pin, openssl_pin(dir / "agent.pem"));
  EXPECT_EQ(pin.size(), 8u + 44u);
  // The pin line follows the "listening" line; read it from a fresh start's output.
  stop();
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const pid_t child = fork();
  if (child == 0) {
    dup2(p[1], 1);
    close(p[0]);
    execl(harness_bin().c_str(), harness_bin().c_str(), "agent", "--bind", "127.0.0.1", "--port", "0", "--token-file",
          token_file.c_str(), "--state-dir", state.c_str(), "--qualify-cmd", (dir / "qualify-ok.sh").c_str(),
          "--no-oom-protect", "--tls-cert", (dir / "agent.pem").c_str(), "--tls-key", (dir / "agent.key").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(p[1]);
  std::string text;
  char c;
  while (read(p[0], &c, 1) == 1) {
    text += c;
    if (c == '\n' && text.find("pin:") != std::string::npos) break;
  }
  close(p[0]);
  kill(child, SIGTERM);
  int st;
  waitpid(child, &st, 0);
  EXPECT_NE(text.find("https"), std::string::npos) << text;
  EXPECT_NE(text.find("agent TLS public-key pin: " + pin), std::string::npos) << text;
}

TEST_F(AgentFixture, ClientWithTheRightPinTalksAndAWrongPinIsRefusedBeforeTheToken) {
  tls = true;
  ASSERT_TRUE(start());
  make_cert(dir, "other");
  const std::string url = "https://127.0.0.1:" + std::to_string(port);
  harness::agent::ClientOptions good;
  good.tls_pin_sha256 = harness::agent::spki_pin_sha256((dir / "agent.pem").string());
  good.get_attempts = 1;
  harness::agent::AgentClient ok(url, kToken, token_file.string(), good);
  EXPECT_EQ(ok.health().value().at("status"), "ok");
  EXPECT_EQ(ok.qualification().value().at("passed"), true);  // authenticated call over TLS

  harness::agent::ClientOptions bad = good;
  bad.tls_pin_sha256 = harness::agent::spki_pin_sha256((dir / "other.pem").string());
  harness::agent::AgentClient wrong(url, kToken, token_file.string(), bad);
  const auto refused = wrong.qualification();
  ASSERT_FALSE(refused.ok()) << "a wrong pin was accepted";
  EXPECT_EQ(refused.failure().kind, harness::agent::FailureKind::Untrusted);
  EXPECT_NE(refused.message().find("does not match the pinned"), std::string::npos) << refused.message();
  // A CA file that did not sign the agent's certificate is refused as well.
  harness::agent::ClientOptions wrong_ca;
  wrong_ca.tls_ca_file = (dir / "other.pem").string();
  wrong_ca.get_attempts = 1;
  EXPECT_EQ(harness::agent::AgentClient(url, kToken, token_file.string(), wrong_ca).health().failure().kind,
            harness::agent::FailureKind::Untrusted);
  harness::agent::ClientOptions right_ca;
  right_ca.tls_ca_file = (dir / "agent.pem").string();
  EXPECT_EQ(harness::agent::AgentClient(url, kToken, token_file.string(), right_ca).health().value().at("status"),
            "ok");
}

TEST_F(AgentFixture, PlainHttpClientToTlsAgentGetsNoAnswer) {
  tls = true;
  ASSERT_TRUE(start());
  harness::agent::ClientOptions o;
  o.get_attempts = 1;
  const auto r = harness::agent::AgentClient("http://127.0.0.1:" + std::to_string(port), kToken, "", o).health();
  EXPECT_FALSE(r.ok()) << "a plain-HTTP request to a TLS agent was answered";
}

// A stop request that comes before serve() has entered its accept loop (a SIGTERM right
// after the "listening" line) must still end it; httplib alone drops such a stop and the
// agent then never exits (seen as a CI timeout).
TEST_F(AgentFixture, StopBeforeServeStillEndsServe) {
  harness::agent::AgentOptions o;
  o.port = 0;
  o.token_file = token_file.string();
  o.state_dir = state.string();
  o.qualify_cmd = (dir / "qualify-ok.sh").string();
  o.oom_protect = false;
  harness::agent::Server server(o);
  ASSERT_GT(server.bind(), 0);
  server.stop();
  std::atomic<bool> returned{false};
  std::thread t([&] { server.serve(); returned = true; });
  for (int i = 0; i < 500 && !returned; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(returned.load()) << "serve() ignored a stop() that came before it";
  if (!returned) {  // do not hang the suite: stop it the ordinary way, then join
    server.stop();
  }
  t.join();
}

/// The agent process exits on a SIGTERM sent the moment it has printed its address, every
/// time (20 starts; each gets 20 s before the test fails it with SIGKILL).
TEST_F(AgentFixture, SigtermRightAfterStartEndsTheAgent) {
  for (int round = 0; round < 20; ++round) {
    ASSERT_TRUE(start()) << "round " << round;
    kill(pid, SIGTERM);
    int st = 0;
    pid_t r = 0;
    for (int i = 0; i < 1000 && r == 0; ++i) {
      r = waitpid(pid, &st, WNOHANG);
      if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (r == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
    }
    pid = -1;
    ASSERT_NE(r, 0) << "round " << round << ": the agent ignored SIGTERM right after start";
  }
}

/// Voluntary context switches of every thread of process `pid` (/proc/<pid>/task/*/status).
long voluntary_switches(pid_t pid) {
  long sum = 0;
  for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(t.path() / "status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) sum += std::stol(line.substr(24));
  }
  return sum;
}

/// An idle agent sleeps: no thread wakes on a timer (the stop applier polled every 20 ms,
/// about 100 wakes in these 2 s; in a guest each wake is CPU charged to the running case).
/// A count of wakes, not a time.
TEST_F(AgentFixture, IdleAgentDoesNotWakeOnATimer) {
  ASSERT_TRUE(start());
  ASSERT_TRUE(client(false).Get("/v1/health"));  // the accept loop runs
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const long before = voluntary_switches(pid);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const long woke = voluntary_switches(pid) - before;
  EXPECT_LE(woke, 10) << "the idle agent's threads woke " << woke << " times in 2 s";
}

/// The agent's end of a kept-alive connection has Nagle off (TCP_NODELAY). With it on, the last
/// piece of each answer waited for the client's delayed ACK: fleet_bench's stub agents, which
/// had it on, took 132 ms of wall per case at one host, 56 ms with it off. Read from the
/// agent's own socket (pidfd_getfd), not timed.
TEST_F(AgentFixture, KeptAliveConnectionsAreServedWithoutNagle) {
  ASSERT_TRUE(start());
  const int fd = connect_loopback(port);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const std::string req =
      "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + std::string(kToken) + "\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  char buf[256];
  ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);  // answered; the connection stays open
  ASSERT_EQ(std::string(buf, 12), "HTTP/1.1 200");
  sockaddr_in mine{};
  socklen_t len = sizeof mine;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &len), 0);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  ASSERT_GE(pidfd, 0) << std::strerror(errno);
  int found = 0, nodelay = -1;
  std::string why;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    if (fs::read_symlink(e.path(), ec).string().rfind("socket:", 0) != 0) continue;
    const int theirs = std::stoi(e.path().filename().string());
    const int dup = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, theirs, 0));
    if (dup < 0) {
      why = std::string("pidfd_getfd: ") + std::strerror(errno);
      continue;
    }
    sockaddr_in peer{};
    socklen_t pl = sizeof peer;
    if (::getpeername(dup, reinterpret_cast<sockaddr*>(&peer), &pl) == 0 && peer.sin_family == AF_INET &&
        peer.sin_port == mine.sin_port) {
      ++found;
      int v = -1;
      socklen_t vl = sizeof v;
      if (::getsockopt(dup, IPPROTO_TCP, TCP_NODELAY, &v, &vl) == 0) nodelay = v;
    }
    ::close(dup);
  }
  ::close(pidfd);
  ::close(fd);
  ASSERT_EQ(found, 1) << "the agent's end of the test's connection, among its fds (" << why << ")";
  EXPECT_EQ(nodelay, 1);
}

/// Executor for the waiting-status tests: phase warmup, then, once DIR/go exists, phase
/// pressure (each renamed into place, as harness-case does), then, once DIR/go2 exists, the
/// bundle and exit.
void write_gated_executor(const fs::path& dir, const fs::path& marker) {
  write_exec(dir / "executor.sh",
             "#!/bin/sh\n"
             "out=\"$4\"; id=$(basename \"$(dirname \"$out\")\")\n"
             "echo \"$id\" >> " + marker.string() + "\n"
             "phase() { echo $1 > \"$out/phase.tmp\"; mv \"$out/phase.tmp\" \"$out/phase\"; }\n"
             "phase warmup\n"
             "while [ ! -e " + (dir / "go").string() + " ]; do sleep 0.1; done\n"
             "phase pressure\n"
             "while [ ! -e " + (dir / "go2").string() + " ]; do sleep 0.1; done\n"
             "cp " + (dir / "bundles").string() + "/$id.db \"$out/$id.db\"\n");
}

/// Creates `file` after `after`, on a thread of its own (joined by the caller).
std::thread touch_later(const fs::path& file, std::chrono::milliseconds after) {
  return std::thread([file, after] {
    std::this_thread::sleep_for(after);
    std::ofstream(file) << "1\n";
  });
}

/// An agent whose executor is write_gated_executor's.
class GatedCase : public AgentFixture {
 protected:
  /// Starts the agent, submits case `id` and waits until its status reads phase warmup;
  /// returns that status (test failures when it does not get there).
  json start_in_warmup(const std::string& id) {
    write_gated_executor(dir, marker);
    make_bundle(id);
    if (!start()) {
      ADD_FAILURE() << "the agent did not start";
      return json::object();
    }
    auto c = test_support::agent_client(port, kToken);
    auto r = c.Post("/v1/cases", valid_spec(id).dump(), "application/json");
    EXPECT_TRUE(r && r->status == 202) << (r ? r->body : std::string("no answer"));
    json s = json::object();
    for (int i = 0; i < 300 && s.value("phase", "") != "warmup"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (auto g = c.Get("/v1/cases/" + id)) s = json::parse(g->body);
    }
    EXPECT_EQ(s.value("state", ""), "running") << s.dump();
    EXPECT_EQ(s.value("phase", ""), "warmup") << s.dump();
    return s;
  }
};

/// GET /v1/cases/{id}?wait_ms=...: the agent holds the answer until the state or phase
/// differs from the one the client names, the case is final, or the wait ends. Lower bounds
/// on elapsed time show that it waited; the upper bounds (far below the wait asked for) show
/// that a change ended the wait, not its end.
TEST_F(GatedCase, WaitingStatusAnswersWhenThePhaseOrStateChanges) {
  json s = start_in_warmup("case-w");
  ASSERT_FALSE(HasFailure());
  auto c = test_support::agent_client(port, kToken, 120);
  using Clock = std::chrono::steady_clock;
  auto timed_get = [&](const std::string& path, json& out) {
    const auto t0 = Clock::now();
    auto r = c.Get(path);
    const auto took = Clock::now() - t0;
    EXPECT_TRUE(r);
    if (r) {
      EXPECT_EQ(r->status, 200) << r->body;
      out = json::parse(r->body);
    }
    return took;
  };
  // 1. A phase change ends the wait (the phase file is renamed into place by the executor).
  std::thread go = touch_later(dir / "go", std::chrono::milliseconds(1500));
  auto took = timed_get("/v1/cases/case-w?wait_ms=60000&state=running&phase=warmup", s);
  go.join();
  EXPECT_EQ(s["phase"], "pressure") << s.dump();
  EXPECT_GE(took, std::chrono::milliseconds(1400)) << "answered before the phase changed";
  EXPECT_LT(took, std::chrono::seconds(40)) << "the phase change did not end the wait";
  // 2. Nothing changes: the answer comes when the wait ends, with the same status.
  took = timed_get("/v1/cases/case-w?wait_ms=1500&state=running&phase=pressure", s);
  EXPECT_EQ(s["state"], "running") << s.dump();
  EXPECT_EQ(s["phase"], "pressure") << s.dump();
  EXPECT_GE(took, std::chrono::milliseconds(1400));
  // 3. A status the client did not see yet is answered at once (no wait asked for ends it).
  took = timed_get("/v1/cases/case-w?wait_ms=60000&state=running&phase=warmup", s);
  EXPECT_EQ(s["phase"], "pressure") << s.dump();
  EXPECT_LT(took, std::chrono::seconds(40));
  // 4. The executor exits: the state change ends the wait (through the client's call).
  harness::agent::AgentClient ac("http://127.0.0.1:" + std::to_string(port), kToken);
  harness::agent::CaseStatus seen;
  seen.state = "running";
  seen.phase = "pressure";
  std::thread go2 = touch_later(dir / "go2", std::chrono::milliseconds(1500));
  const auto t0 = Clock::now();
  const auto st = ac.wait_status("case-w", seen, std::chrono::milliseconds(60000)).value();
  took = Clock::now() - t0;
  go2.join();
  EXPECT_NE(st.state, "running");
  EXPECT_GE(took, std::chrono::milliseconds(1400));
  EXPECT_LT(took, std::chrono::seconds(40)) << "the executor's exit did not end the wait";
  json fin = wait_final("case-w");
  EXPECT_EQ(fin["state"], "completed") << fin.dump();
  // 5. A final case is answered at once, even when the client names its state.
  took = timed_get("/v1/cases/case-w?wait_ms=60000&state=completed&phase=done", s);
  EXPECT_EQ(s["state"], "completed");
  EXPECT_LT(took, std::chrono::seconds(40));
  // 6. Bad parameters: 400 naming the field.
  for (const auto& [q, field] : {std::pair<std::string, std::string>{"wait_ms=abc&state=running&phase=setup", "wait_ms"},
                                 {"wait_ms=60001&state=running&phase=setup", "wait_ms"},
                                 {"wait_ms=-5&state=running&phase=setup", "wait_ms"},
                                 {"wait_ms=100&phase=setup", "state"},
                                 {"wait_ms=100&state=running", "phase"}}) {
    auto r = c.Get("/v1/cases/case-w?" + q);
    ASSERT_TRUE(r) << q;
    EXPECT_EQ(r->status, 400) << q << ": " << r->body;
    EXPECT_EQ(json::parse(r->body)["field"], field) << q;
  }
}

/// While a case runs and a client holds a waiting status request, the agent sleeps: the
/// watcher waits on the executor's pidfd and the phase file's inotify descriptor (it woke
/// once a second before), and the held request waits on a condition variable. A count of
/// wakes, not a time. A stop ends the held request at once.
TEST_F(GatedCase, RunningCaseWithAWaitingClientDoesNotWakeTheAgentOnATimer) {
  start_in_warmup("case-q");
  ASSERT_FALSE(HasFailure());
  std::atomic<bool> answered{false};
  std::string held_body;
  std::thread held([&] {
    auto h = test_support::agent_client(port, kToken, 120);
    auto r = h.Get("/v1/cases/case-q?wait_ms=60000&state=running&phase=warmup");
    if (r) held_body = r->body;
    answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long before = voluntary_switches(pid);
  std::this_thread::sleep_for(std::chrono::seconds(5));
  const long woke = voluntary_switches(pid) - before;
  EXPECT_FALSE(answered.load()) << "the held request was answered without a change: " << held_body;
  EXPECT_LE(woke, 3) << "the agent's threads woke " << woke << " times in 5 s with a case running";
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);  // the running case keeps running; the held request is answered
  for (int i = 0; i < 400 && !answered.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(answered.load()) << "a stop did not end the held request";
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  std::ofstream(dir / "go") << "1\n";
  std::ofstream(dir / "go2") << "1\n";
  held.join();
}

TEST_F(AgentFixture, NonLoopbackBindWithoutTlsIsRefused) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const pid_t child = fork();
  if (child == 0) {
    dup2(p[1], 1);
    dup2(p[1], 2);
    close(p[0]);
    execl(harness_bin().c_str(), harness_bin().c_str(), "agent", "--bind", "0.0.0.0", "--port", "0", "--token-file",
          token_file.c_str(), "--state-dir", state.c_str(), "--qualify-cmd", (dir / "qualify-ok.sh").c_str(),
          "--no-oom-protect", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(p[1]);
  std::string out;
  char c;
  while (read(p[0], &c, 1) == 1) out += c;  // the agent exits: EOF
  close(p[0]);
  int st = 0;
  waitpid(child, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) != 0) << out;
  EXPECT_NE(out.find("refusing plain HTTP on a non-loopback address"), std::string::npos) << out;
  EXPECT_EQ(out.find("listening on"), std::string::npos) << out;
}

TEST(AgentTransport, LoopbackAddresses) {
  EXPECT_TRUE(harness::agent::is_loopback_address("127.0.0.1"));
  EXPECT_TRUE(harness::agent::is_loopback_address("127.3.2.1"));
  EXPECT_TRUE(harness::agent::is_loopback_address("::1"));
  EXPECT_TRUE(harness::agent::is_loopback_address("localhost"));
  EXPECT_FALSE(harness::agent::is_loopback_address("0.0.0.0"));
  EXPECT_FALSE(harness::agent::is_loopback_address("10.0.2.15"));
  EXPECT_TRUE(harness::agent::url_is_loopback("http://127.0.0.1:8080"));
  EXPECT_TRUE(harness::agent::url_is_loopback("http://[::1]:8080/x"));
  EXPECT_FALSE(harness::agent::url_is_loopback("http://10.0.0.5:8080"));
  EXPECT_FALSE(harness::agent::url_is_loopback("http://127.0.0.1.example.org:8080"));
  // A bare host[:port] (the A/B report reads "NAME URL" of an attempt) and names.
  EXPECT_TRUE(harness::agent::url_is_loopback("127.0.0.1:8080"));
  EXPECT_TRUE(harness::agent::url_is_loopback("https://localhost/v1/health"));
  EXPECT_FALSE(harness::agent::url_is_loopback("localhost.example.org:8080"));
  EXPECT_FALSE(harness::agent::url_is_loopback("http://[::2]:8080"));
}

TEST(AgentTransport, ClientRefusesPlainHttpToANetworkHostUnlessAllowed) {
  try {
    harness::agent::AgentClient("http://10.0.0.5:8080", "t");
    ADD_FAILURE() << "plain http to a network host was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("clear text"), std::string::npos) << e.what();
  }
  harness::agent::ClientOptions o;
  o.allow_plain_http = true;
  EXPECT_NO_THROW(harness::agent::AgentClient("http://10.0.0.5:8080", "t", "", o));
  harness::agent::ClientOptions pin_on_http;
  pin_on_http.tls_pin_sha256 = "sha256//AAAA";
  EXPECT_THROW(harness::agent::AgentClient("http://127.0.0.1:1", "t", "", pin_on_http), std::invalid_argument);
}

// An unclean restoration marks the VM unusable (state dir unclean.json,
// survives an agent restart): every submission gets 412 naming the case and its problems
// and nothing runs, health shows the mark, and DELETE /v1/unclean clears it.
TEST_P(AgentProcess, UncleanRestorationBlocksFurtherCasesUntilCleared) {
  make_bundle("case-u");
  {
    results::Db db((dir / "bundles" / "case-u.db").string(), results::Db::Mode::ReadWrite);
    results::Stmt st(db, "INSERT INTO restoration(case_id,start_ns,end_ns,clean,detail_json) VALUES('case-u',1,2,0,?)");
    st.bind(1, json{{"verdict", {{"clean", false}, {"problems", {"cgroup sys/fs/cgroup/harness/bg still exists"}}}}}.dump());
    st.run();
  }
  make_bundle("case-next");
  ASSERT_TRUE(start());
  ASSERT_EQ(client().Post("/v1/cases", valid_spec("case-u").dump(), "application/json")->status, 202);
  EXPECT_EQ(wait_final("case-u")["state"], "completed");  // the case itself keeps its outcome
  ASSERT_TRUE(fs::exists(state / "unclean.json"));
  auto refused = client().Post("/v1/cases", valid_spec("case-next").dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 412);
  EXPECT_NE(refused->body.find("restoration of case case-u was unclean"), std::string::npos) << refused->body;
  EXPECT_NE(refused->body.find("harness/bg still exists"), std::string::npos) << refused->body;
  EXPECT_NE(refused->body.find("DELETE /v1/unclean"), std::string::npos) << refused->body;
  EXPECT_FALSE(fs::exists(state / "cases" / "case-next")) << "a refused case left state behind";
  EXPECT_EQ(runs(), std::vector<std::string>{"case-u"});
  auto h = client(false).Get("/v1/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(json::parse(h->body)["unclean"]["case_id"], "case-u") << h->body;
  // Survives a restart of the agent.
  stop();
  ASSERT_TRUE(start());
  EXPECT_EQ(client().Post("/v1/cases", valid_spec("case-next").dump(), "application/json")->status, 412);
  // Clearing needs the token; then the next case runs.
  EXPECT_EQ(client(false).Delete("/v1/unclean")->status, 401);
  auto cleared = client().Delete("/v1/unclean");
  ASSERT_TRUE(cleared);
  EXPECT_EQ(cleared->status, 200) << cleared->body;
  EXPECT_EQ(client().Delete("/v1/unclean")->status, 404);
  EXPECT_TRUE(json::parse(client(false).Get("/v1/health")->body)["unclean"].is_null());
  ASSERT_EQ(client().Post("/v1/cases", valid_spec("case-next").dump(), "application/json")->status, 202);
  EXPECT_EQ(wait_final("case-next")["state"], "completed");
  EXPECT_FALSE(fs::exists(state / "unclean.json"));
}

}  // namespace
