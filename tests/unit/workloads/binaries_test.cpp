// End-to-end behaviour of the three executables (spawned from the build tree): SIGTERM
// still writes the trace / the report and exits 0; bad arguments and bad databases give
// a clear error and a non-zero exit, no crash. No timing assertions and no sleeps: readiness
// for SIGTERM is read from /proc/<pid>/status (SigCgt), progress from the canary's journal or
// pressure-gen's VmRSS, each waited for with a deadline that fails the test.
#include "canaries/trace_file.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/wait_until.hpp"

#include <nlohmann/json.hpp>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

namespace fs = std::filesystem;
using test_support::slurp;
extern char** environ;

namespace {

const std::string kBin = HARNESS_BINARY_DIR;

struct Child {
  pid_t pid = -1;
  fs::path out, err;
};

Child spawn(const std::vector<std::string>& argv, const fs::path& dir, const std::string& tag) {
  Child r;
  r.out = dir / (tag + ".out");
  r.err = dir / (tag + ".err");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, r.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, r.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  EXPECT_EQ(posix_spawn(&r.pid, args[0], &fa, nullptr, args.data(), environ), 0) << argv[0];
  posix_spawn_file_actions_destroy(&fa);
  return r;
}

int wait_exit(pid_t pid) {
  int st = 0;
  EXPECT_EQ(waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFEXITED(st)) << "killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/// The value of `key` ("SigCgt:", "VmRSS:") in /proc/<pid>/status, base `base`; nullopt when
/// the process or the line is gone.
std::optional<unsigned long long> status_field(pid_t pid, const std::string& key, int base) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(st, line);)
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size()), nullptr, base);
  return std::nullopt;
}

/// Waits (60 s at most, then the test fails) until the process catches SIGTERM.
void wait_for_sigterm_handler(pid_t pid) {
  ASSERT_TRUE(test_support::wait_until(
      [&] { return status_field(pid, "SigCgt:", 16).value_or(0) & (1ULL << (SIGTERM - 1)); }, std::chrono::seconds(60)))
      << "pid " << pid << " installed no SIGTERM handler within 60 s";
}

/// The finished requests in the journal of `trace` so far (0 while it has no valid header).
std::size_t journalled(const fs::path& trace) {
  try {
    return canaries::read_journal(canaries::journal_path(trace.string())).records.size();
  } catch (const canaries::TraceError&) {
    return 0;
  }
}

/// Waits (60 s at most, then the test fails) until the canary tracing to `trace` has
/// journalled at least `n` finished requests.
void wait_for_journal(const fs::path& trace, std::size_t n) {
  ASSERT_TRUE(test_support::wait_until([&] { return journalled(trace) >= n; }, std::chrono::seconds(60)))
      << "fewer than " << n << " requests journalled after 60 s (" << journalled(trace) << ")";
}

class Binaries : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hk-bin-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  /// canary-compute at a 10 ms period with a 1 MiB hot set for `duration_s` (s, as its flag
  /// takes it), tracing to dir_/<tag>.trace, output to dir_/<tag>.{out,err}.
  Child spawn_compute(const std::string& duration_s, const std::string& tag) const {
    return spawn({kBin + "/canaries/canary-compute", "--period-ms", "10", "--duration-s", duration_s, "--hot-mib", "1",
                  "--trace", (dir_ / (tag + ".trace")).string()},
                 dir_, tag);
  }
  fs::path dir_;
};

}  // namespace

TEST_F(Binaries, CanaryComputeRunsItsScheduleAndWritesTrace) {
  const fs::path trace = dir_ / "c.trace";
  Child r = spawn_compute("0.2", "c");
  ASSERT_EQ(wait_exit(r.pid), 0) << slurp(r.err);
  const auto j = nlohmann::json::parse(slurp(r.out));
  EXPECT_EQ(j["stopped_by"], "schedule_end");
  EXPECT_EQ(j["requests_planned"].get<int>(), 20);
  const auto t = canaries::read_trace(trace.string());
  EXPECT_EQ(t.header.canary, "compute");
  EXPECT_EQ(t.header.period_ns, 10'000'000);
  ASSERT_EQ(t.records.size(), 20u);
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const auto& rec = t.records[i];
    EXPECT_EQ(rec.seq, i);
    EXPECT_EQ(rec.scheduled_ns, t.header.origin_ns + static_cast<std::int64_t>(i) * t.header.period_ns);
    EXPECT_GE(rec.wake_ns, rec.scheduled_ns);
    EXPECT_GE(rec.completion_ns, rec.wake_ns);
  }
}

// A canary killed outright (SIGKILL, as the OOM killer does) leaves every request
// it finished in its journal; no final trace exists.
TEST_F(Binaries, CanaryKilledWithSigkillLeavesEveryFinishedRequestInItsJournal) {
  const fs::path trace = dir_ / "k.trace";
  Child r = spawn_compute("600", "k");
  const auto t_spawned = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(wait_for_sigterm_handler(r.pid));
  ASSERT_NO_FATAL_FAILURE(wait_for_journal(trace, 10));
  ASSERT_EQ(kill(r.pid, SIGKILL), 0);
  int st = 0;
  ASSERT_EQ(waitpid(r.pid, &st, 0), r.pid);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  const auto ran_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t_spawned).count();
  EXPECT_FALSE(fs::exists(trace)) << "a SIGKILLed canary cannot have written its final trace";
  ASSERT_TRUE(fs::exists(canaries::journal_path(trace.string())));
  const auto t = canaries::read_journal(canaries::journal_path(trace.string()));
  EXPECT_EQ(t.header.canary, "compute");
  EXPECT_EQ(t.header.period_ns, 10'000'000);
  ASSERT_GE(t.records.size(), 10u) << "10 were journalled before the kill";
  EXPECT_LE(t.records.size(), static_cast<std::size_t>(ran_ms / 10 + 2)) << ran_ms << " ms";
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const auto& rec = t.records[i];
    EXPECT_EQ(rec.seq, i);  // none skipped, in order
    EXPECT_EQ(rec.scheduled_ns, t.header.origin_ns + static_cast<std::int64_t>(i) * t.header.period_ns);
    EXPECT_GE(rec.completion_ns, rec.wake_ns) << "journalled records are finished requests";
  }
}

TEST_F(Binaries, CanaryThatFinishesRemovesItsJournal) {
  const fs::path trace = dir_ / "f.trace";
  Child r = spawn_compute("0.1", "f");
  ASSERT_EQ(wait_exit(r.pid), 0) << slurp(r.err);
  EXPECT_TRUE(fs::exists(trace));
  EXPECT_FALSE(fs::exists(canaries::journal_path(trace.string())));
  EXPECT_EQ(nlohmann::json::parse(slurp(r.out))["journal_errors"], 0);
}

TEST_F(Binaries, CanaryComputeWritesTraceOnSigterm) {
  const fs::path trace = dir_ / "t.trace";
  Child r = spawn_compute("600", "t");
  const auto t_spawned = std::chrono::steady_clock::now();  // after spawn: an upper bound of the run
  ASSERT_NO_FATAL_FAILURE(wait_for_sigterm_handler(r.pid));
  ASSERT_NO_FATAL_FAILURE(wait_for_journal(trace, 1));
  ASSERT_EQ(kill(r.pid, SIGTERM), 0);
  ASSERT_EQ(wait_exit(r.pid), 0) << slurp(r.err);
  const auto ran_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t_spawned).count();
  const auto j = nlohmann::json::parse(slurp(r.out));
  EXPECT_EQ(j["stopped_by"], "SIGTERM");
  EXPECT_EQ(j["trace_written"], true);
  EXPECT_EQ(j["requests_planned"].get<int>(), 60000);
  const auto t = canaries::read_trace(trace.string());
  EXPECT_EQ(t.records.size(), j["requests_recorded"].get<std::size_t>());
  // Stopped early: at least the request journalled before SIGTERM, and no more than one per
  // 10 ms period of the time it lived (+ the one in flight).
  EXPECT_GE(t.records.size(), 1u);
  EXPECT_LE(t.records.size(), static_cast<std::size_t>(ran_ms / 10 + 2)) << ran_ms << " ms";
}

TEST_F(Binaries, PressureGenReportsOnSigtermMidAllocation) {
  Child r = spawn({kBin + "/pressure/pressure-gen", "--allocation-mib", "4096", "--rate-mib-s", "16",
                 "--chunk-mib", "1", "--active-set-mib", "8", "--contents", "random", "--seed", "5"},
                dir_, "p");
  ASSERT_NO_FATAL_FAILURE(wait_for_sigterm_handler(r.pid));
  // Mid-allocation: its resident set has grown by 10 MiB (of 4096) since the handler was up.
  // A chunk is faulted in whole (MADV_POPULATE_WRITE) before its pages are filled and counted,
  // so up to one chunk (1 MiB) of that growth may not be counted yet when SIGTERM stops the
  // fill; 1 MiB more covers what else the process faults in meanwhile: >= 8 MiB allocated.
  const auto rss0 = status_field(r.pid, "VmRSS:", 10);
  ASSERT_TRUE(rss0.has_value());
  ASSERT_TRUE(test_support::wait_until(
      [&] { return status_field(r.pid, "VmRSS:", 10).value_or(0) >= *rss0 + 10 * 1024; }, std::chrono::seconds(60)))
      << "pressure-gen's resident set grew by less than 10 MiB in 60 s";
  ASSERT_EQ(kill(r.pid, SIGTERM), 0);
  ASSERT_EQ(wait_exit(r.pid), 0) << slurp(r.err);
  const auto j = nlohmann::json::parse(slurp(r.out));
  EXPECT_EQ(j["stopped_by"], "SIGTERM");
  EXPECT_EQ(j["allocation_complete"], false);
  EXPECT_GE(j["allocated_mib"].get<double>(), 8.0);
  EXPECT_LT(j["allocated_mib"].get<double>(), 4096.0);
  for (const char* k : {"achieved_rate_mib_s", "touch_passes", "minflt", "majflt", "elapsed_s", "cpu_user_s", "cpu_sys_s"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
}

TEST_F(Binaries, BadArgumentsNameTheFlag) {
  Child a = spawn({kBin + "/canaries/canary-compute", "--duration-s", "1", "--hot-mib", "0", "--trace",
                 (dir_ / "x").string()},
                dir_, "a");
  EXPECT_EQ(wait_exit(a.pid), 2);
  EXPECT_NE(slurp(a.err).find("--hot-mib"), std::string::npos) << slurp(a.err);
  Child b = spawn({kBin + "/pressure/pressure-gen", "--allocation-mib", "10", "--rate-mib-s", "abc"}, dir_, "b");
  EXPECT_EQ(wait_exit(b.pid), 2);
  EXPECT_NE(slurp(b.err).find("--rate-mib-s"), std::string::npos) << slurp(b.err);
  Child c = spawn({kBin + "/canaries/canary-sqlite", "run", "--db", "x.db", "--duration-s", "1", "--trace",
                 (dir_ / "y").string(), "--queries-per-request", "0"},
                dir_, "c");
  EXPECT_EQ(wait_exit(c.pid), 2);
  EXPECT_NE(slurp(c.err).find("--queries-per-request"), std::string::npos) << slurp(c.err);
}

TEST_F(Binaries, CanarySqliteMissingOrCorruptDatabaseIsAnErrorNotACrash) {
  Child a = spawn({kBin + "/canaries/canary-sqlite", "run", "--db", (dir_ / "missing.db").string(), "--duration-s",
                 "1", "--trace", (dir_ / "a.trace").string()},
                dir_, "a");
  EXPECT_EQ(wait_exit(a.pid), 1);
  EXPECT_NE(slurp(a.err).find("prepare"), std::string::npos) << slurp(a.err);
  std::ofstream(dir_ / "bad.db", std::ios::binary) << std::string(4096, 'x');
  Child b = spawn({kBin + "/canaries/canary-sqlite", "run", "--db", (dir_ / "bad.db").string(), "--duration-s", "1",
                 "--trace", (dir_ / "b.trace").string()},
                dir_, "b");
  EXPECT_EQ(wait_exit(b.pid), 1);
  EXPECT_NE(slurp(b.err).find("not a SQLite database"), std::string::npos) << slurp(b.err);
}

TEST_F(Binaries, CanarySqlitePrepareThenRun) {
  const fs::path db = dir_ / "c.db", trace = dir_ / "s.trace";
  Child p = spawn({kBin + "/canaries/canary-sqlite", "prepare", "--db", db.string(), "--rows", "500", "--seed", "4"},
                dir_, "p");
  ASSERT_EQ(wait_exit(p.pid), 0) << slurp(p.err);
  Child r = spawn({kBin + "/canaries/canary-sqlite", "run", "--db", db.string(), "--period-ms", "10", "--duration-s",
                 "0.1", "--queries-per-request", "8", "--trace", trace.string()},
                dir_, "r");
  ASSERT_EQ(wait_exit(r.pid), 0) << slurp(r.err);
  const auto j = nlohmann::json::parse(slurp(r.out));
  EXPECT_EQ(j["rows_missing"].get<int>(), 0);
  EXPECT_EQ(j["requests_recorded"].get<int>(), 10);
  EXPECT_EQ(canaries::read_trace(trace.string()).header.canary, "sqlite");
}
