// The TLS path between runner and agent in a real guest (docs/LABS.md "Running on real VMs" steps
// 2-4, harness/vm/HOSTS.md): inside one fresh guest (`harness vm exec`) the script starts
// `harness agent` on 127.0.0.1:8443 with a certificate made here (--tls-cert/--tls-key,
// bearer token in a 0600 file) and runs `harness run tests/vm/agent/tls.yaml --hosts H`
// twice, the runner in the same guest:
//   - H pins another key (tls_pin_sha256 of a second certificate): refused before the token is
//     sent. The runner reports the pin mismatch, stops (exit 2, nothing run) and the agent
//     never saw a case;
//   - H pins the agent's key (`harness fleet pin`, as that section's step 4 says): the case runs over
//     HTTPS and completes, its bundle downloaded over TLS and imported.
// Then `harness calibrate run --hosts H` runs a one-point calibration grid through the same
// agent (the calibration on a study VM, campaigns/README.md): its case completes in the guest
// and the table is printed from the bundle it downloaded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "results/db.hpp"
#include "tests/common/guest_exec.hpp"
#include "tests/common/run_harness.hpp"

using ::testing::HasSubstr;
using ::testing::Not;
using test_support::slurp;
namespace fs = std::filesystem;

namespace {

/// A self-signed EC certificate for 127.0.0.1 in `dir`/`stem`.{pem,key} (openssl CLI).
bool make_cert(const fs::path& dir, const std::string& stem) {
  const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                          "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
                          (dir / (stem + ".key")).string() + " -out " + (dir / (stem + ".pem")).string() + " 2>/dev/null";
  return std::system(cmd.c_str()) == 0;
}

/// The `harness fleet pin` of `cert` (its last line), "" on failure.
std::string pin_of(const fs::path& cert, const fs::path& log) {
  const auto r = test_support::run_harness("fleet pin " + cert.string(), log);
  if (r.code != 0) return "";
  std::string last, line;
  std::istringstream in(r.out);
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

class TlsVm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path keys = fs::temp_directory_path() / ("tls_vm_keys_" + std::to_string(getpid()));
    fs::create_directories(keys);
    if (!make_cert(keys, "agent") || !make_cert(keys, "other")) {
      run_.setup_error = "openssl could not make the test certificates";
      return;
    }
    pin_ = pin_of(keys / "agent.pem", keys / "pin.log");
    other_pin_ = pin_of(keys / "other.pem", keys / "pin.log");
    if (pin_.rfind("sha256//", 0) != 0 || other_pin_.rfind("sha256//", 0) != 0 || pin_ == other_pin_) {
      run_.setup_error = "harness fleet pin gave '" + pin_ + "' / '" + other_pin_ + "': " + slurp(keys / "pin.log");
      return;
    }
    auto file = [&](const std::string& guest_path, const std::string& text) {
      return "cat > " + guest_path + " <<'EOF'\n" + text + (text.ends_with('\n') ? "" : "\n") + "EOF\n";
    };
    auto hosts = [&](const std::string& pin) {
      return "hosts:\n  - name: vm0\n    url: https://127.0.0.1:8443\n    token_file: /out/agent.token\n"
             "    tls_pin_sha256: " + pin + "\n";
    };
    std::ostringstream sc;
    sc << "set -x\n"
       << file("/out/agent.pem", slurp(keys / "agent.pem")) << file("/out/agent.key", slurp(keys / "agent.key"))
       << file("/out/tls.yaml", slurp(std::string(HARNESS_SOURCE_DIR) + "/tests/vm/agent/tls.yaml"))
       << file("/out/hosts-pinned.yaml", hosts(pin_)) << file("/out/hosts-other.yaml", hosts(other_pin_))
       << "chmod 600 /out/agent.key; (umask 077; echo tls-test-token-0123456789abcdef-0123456789 > /out/agent.token)\n"
       << "harness agent --bind 127.0.0.1 --port 8443 --token-file /out/agent.token --state-dir /out/agent-state "
          "--tls-cert /out/agent.pem --tls-key /out/agent.key > /out/agent.log 2>&1 &\n"
       << "AGENT=$!\n"
       << "i=0; while [ $i -lt 600 ] && ! grep -q 'listening on' /out/agent.log; do sleep 0.1; i=$((i+1)); done\n"
       << "harness run /out/tls.yaml /out/other.db --hosts /out/hosts-other.yaml --host-wait-s 5 --plain > /out/other.log "
          "2>&1; echo $? > /out/other.rc\n"
       << "ls /out/agent-state > /out/agent-state.after-other 2>&1\n"
       << "harness run /out/tls.yaml /out/pinned.db --hosts /out/hosts-pinned.yaml --plain > /out/pinned.log 2>&1; "
          "echo $? > /out/pinned.rc\n"
       << "harness calibrate run --out /out/calib --hosts /out/hosts-pinned.yaml --allocation-mib 200 "
          "--active-set-mib 96 --bg-max-mib 120 --slide-mib-s 0.5 --rate-mib-s 64 --warmup-s 1 --pressure-s 12 "
          "--recovery-s 1 > /out/calib.log 2>&1; "
          "echo $? > /out/calib.rc\n"
       << "kill $AGENT; wait $AGENT; echo $? > /out/agent.rc\n";
    // The guest runs the workstation's side too (harness run, calibrate): the whole CLI.
    run_ = test_support::run_in_guest(sc.str(), "HARNESS_VM_TLS_KEEP", "tls_vm_test", 900, /*with_cli=*/true);
    fs::remove_all(keys);
  }
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(test_support::require_guest_ran(run_)); }

  static std::string out(const std::string& f) { return slurp(run_.out(f)); }
  static int rc(const std::string& f) {
    const std::string t = out(f);
    return t.empty() ? -1 : std::stoi(t);
  }

  static inline test_support::GuestRun run_;
  static inline std::string pin_, other_pin_;
};

}  // namespace

TEST_F(TlsVm, AgentServedHttpsWithTheCertificate) {
  EXPECT_EQ(run_.exec_rc, 0) << "see " << run_.dir / "exec.log" << " and " << run_.out("console.log");
  const std::string log = out("agent.log");
  EXPECT_THAT(log, HasSubstr("agent listening on 127.0.0.1:8443 (https")) << log;
  EXPECT_THAT(log, HasSubstr("agent TLS public-key pin: " + pin_)) << log;
}

TEST_F(TlsVm, AnotherPinIsRefusedBeforeTheTokenIsSent) {
  EXPECT_EQ(rc("other.rc"), 2) << out("other.log");
  EXPECT_THAT(out("other.log"), HasSubstr("TLS public key does not match the pinned " + other_pin_)) << out("other.log");
  EXPECT_THAT(out("other.log"), HasSubstr("nothing was sent")) << out("other.log");
  EXPECT_THAT(out("other.log"), Not(HasSubstr("completed,"))) << out("other.log");
  // The agent never accepted a case (a request with the token would have been served).
  EXPECT_THAT(out("agent-state.after-other"), Not(HasSubstr("tls-vm0"))) << out("agent-state.after-other");
  ASSERT_TRUE(fs::exists(run_.out("other.db")));
  results::Db db(run_.out("other.db").string(), results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT count(*) FROM attempts");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 0) << "an attempt was made through a host whose pin does not match";
}

TEST_F(TlsVm, ThePinnedAgentRunsTheCaseOverHttps) {
  EXPECT_EQ(rc("pinned.rc"), 0) << out("pinned.log");
  ASSERT_TRUE(fs::exists(run_.out("pinned.db"))) << out("pinned.log");
  results::Db db(run_.out("pinned.db").string(), results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT c.status, (SELECT count(*) FROM canary_requests r WHERE r.case_id = c.case_id), "
                      "(SELECT count(*) FROM telemetry t WHERE t.case_id = c.case_id), a.host FROM cases c "
                      "JOIN attempts a USING (case_id)");
  ASSERT_TRUE(q.step()) << out("pinned.log");
  EXPECT_EQ(q.text(0), "completed");
  EXPECT_GT(q.int64(1), 100) << "the bundle came over TLS without its canary trace";
  EXPECT_GE(q.int64(2), 10);
  EXPECT_EQ(q.text(3), "vm0 https://127.0.0.1:8443");
  EXPECT_FALSE(q.step()) << "one case, one attempt";
}

TEST_F(TlsVm, CalibrationRunsThroughTheAgentOfAHostsFile) {
  EXPECT_EQ(rc("calib.rc"), 0) << out("calib.log");
  const std::string log = out("calib.log");
  EXPECT_THAT(log, HasSubstr("1 cases on vm0 (https://127.0.0.1:8443)")) << log;
  // The table row of the one point (it is also the chosen one, so its first cell carries the
  // "**chosen**" mark): 200 MiB allocated against a 120 MiB bg memory.max within the 12 s
  // pressure phase (TCG allocates about 20 MiB/s) must swap out; a zero would mean the episode
  // was not measured through the agent.
  std::istringstream lines(log);
  std::string row;
  for (std::string l; std::getline(lines, l);)
    if (l.find("200 MiB / 96 MiB / 0.5 MiB/s / 120 MiB |") != std::string::npos) row = l;
  ASSERT_FALSE(row.empty()) << "no table row for the point:\n" << log;
  std::vector<std::string> cells;
  std::istringstream cs(row);
  for (std::string c; std::getline(cs, c, '|');) cells.push_back(c);
  ASSERT_GE(cells.size(), 5u) << row;
  EXPECT_EQ(std::stoi(cells[2]), 12) << "P (s): " << row;
  EXPECT_GT(std::stoll(cells[3]), 0) << "no swap-out KiB for 200 MiB against memory.max 120 MiB: " << row;
  const auto bundle = run_.out("calib/collect/bundles/calib-a200-s96-v500-m120.db");
  ASSERT_TRUE(fs::exists(bundle)) << log;
  results::Db db(bundle.string(), results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT c.case_id, c.status, c.configuration, "
                      "(SELECT count(*) FROM telemetry t WHERE t.case_id = c.case_id) FROM cases c");
  ASSERT_TRUE(q.step()) << "no case in the downloaded bundle";
  EXPECT_THAT(q.text(0), ::testing::MatchesRegex("calib-a200-s96-v500-m120-[0-9a-f]{8}"));
  EXPECT_EQ(q.text(1), "completed");
  EXPECT_EQ(q.text(2), "static-zram");
  EXPECT_GE(q.int64(3), 12) << "fewer 1 Hz telemetry samples than the 14 s of phases";
  EXPECT_FALSE(q.step()) << "one case per bundle";
}
