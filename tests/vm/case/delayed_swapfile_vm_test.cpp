// vm-labelled test of backend.delayed_swapfile (harness/case/spec.hpp DelayedSwapfile): one
// fresh guest runs two short delayed-activation cases, one with the swapfile active from the
// start (the default) and one with it off until the trigger. bg has a memory.high (128 MiB)
// below its memory.max (200 MiB) and pressure-gen allocates 320 MiB: over memory.high the kernel
// reclaims and then throttles the allocator (a memory stall in bg PSI, mem_cgroup_handle_over_high)
// instead of OOM-killing it, so the trigger fires in both cases, with no swap at all before it
// in `off` too (a case where it never fires fails the test). With `active` the swapfile (the
// only swap device before the trigger) takes pages before the trigger; with `off` nothing can
// be swapped before it, and the swapfile joins at it. Read from the bundles' telemetry
// (/proc/swaps Used of the swapfile at every tick up to the trigger tick, whose sample is read
// before the action; and every sample of the warmup phase) and from a /proc/swaps snapshot the
// guest script itself takes in each case's warmup (not the code under test): the script waits
// until the case's phase file (<out>/phase) says `warmup`, takes the snapshot between two
// /proc/uptime readings, and reads the phase file again; the test checks that both readings
// said warmup and that the snapshot lies inside the bundle's warmup phase.
// ~2.5 min under TCG. Env: HARNESS_VM_DELAYED_SWAPFILE_KEEP=DIR keeps the collected output.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include "results/db.hpp"
#include "tests/common/guest_exec.hpp"
#include "tests/common/vm_case_spec.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const char* kValues[] = {"active", "off"};

json spec_for(const std::string& value) {
  json s = test_support::vm_case_spec("vmtest-swapfile-" + value, "delayed-activation",
                                      {.warmup_s = 3, .pressure_s = 15, .recovery_s = 3, .bg_memory_max_mib = 200,
                                       .bg_memory_high_mib = 128, .zram_disksize_mib = 512, .allocation_mib = 320,
                                       .active_set_mib = 256});
  if (std::string(value) != "active") s["backend"]["delayed_swapfile"] = value;
  return s;
}

class DelayedSwapfileVm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ostringstream sc;
    sc << "set -x\nmkdir -p /out/bundles\n";
    for (const char* v : kValues) {
      sc << "cat > /out/" << v << ".json <<'EOF'\n" << spec_for(v).dump(2) << "\nEOF\n";
      // A /proc/swaps snapshot in the case's warmup phase, by the script: once the phase file
      // (replaced atomically at each phase change; the previous case left `restoration`) says
      // warmup, between two /proc/uptime readings, then the phase file again. Gives up after 60 s.
      sc << "(i=0; while [ $i -lt 1200 ] && [ \"$(cat /out/bundles/phase 2>/dev/null)\" != warmup ]; do sleep 0.05; "
            "i=$((i+1)); done; read -r t0 x < /proc/uptime; cat /proc/swaps > /out/" << v << ".warmup.swaps; "
            "read -r t1 x < /proc/uptime; echo \"$t0 $t1 $(cat /out/bundles/phase)\" > /out/" << v << ".warmup.when) &\n";
      sc << "harness case run --spec /out/" << v << ".json --out /out/bundles"
         << " --min-free-disk-mib 64 > /out/" << v << ".stdout 2> /out/" << v << ".stderr\necho $? > /out/" << v
         << ".rc\nwait\n";
    }
    run_ = test_support::run_in_guest(sc.str(), "HARNESS_VM_DELAYED_SWAPFILE_KEEP", "delayed_swapfile_vm_test", 900);
    dir_ = run_.dir;
  }
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(test_support::require_guest_ran(run_)); }

  static fs::path collect(const std::string& f) { return dir_ / "collect" / f; }
  static fs::path bundle(const std::string& v) { return collect("bundles/vmtest-swapfile-" + v + ".db"); }

  /// The trigger tick (CLOCK_MONOTONIC ns), nullopt when it never fired.
  static std::optional<std::int64_t> trigger_ns(const std::string& v) {
    results::Db db(bundle(v).string(), results::Db::Mode::ReadOnly);
    results::Stmt t(db, "SELECT MIN(t_ns) FROM controller_events WHERE kind = 'trigger'");
    if (!t.step() || t.is_null(0)) return std::nullopt;
    return t.int64(0);
  }
  /// Max swapfile Used (KiB) over the samples up to and including `until_ns` (all samples
  /// when nullopt); -1 when no sample carries it (the swapfile had no /proc/swaps row).
  static long long swapfile_used_kib_until(const std::string& v, std::optional<std::int64_t> until_ns) {
    results::Db db(bundle(v).string(), results::Db::Mode::ReadOnly);
    results::Stmt s(db, "SELECT MAX(swapfile_used_kib) FROM telemetry WHERE t_ns <= ?1");
    s.bind(1, until_ns.value_or(INT64_MAX));
    EXPECT_TRUE(s.step());
    return s.is_null(0) ? -1 : s.int64(0);
  }

  /// The bundle's phase `name` as {start_ns, end_ns} (CLOCK_MONOTONIC of the guest).
  static std::pair<std::int64_t, std::int64_t> phase_ns(const std::string& v, const std::string& name) {
    results::Db db(bundle(v).string(), results::Db::Mode::ReadOnly);
    results::Stmt p(db, "SELECT start_ns, end_ns FROM phases WHERE phase = ?1");
    p.bind(1, name);
    EXPECT_TRUE(p.step()) << v << ": no " << name << " phase";
    return {p.int64(0), p.is_null(1) ? INT64_MAX : p.int64(1)};
  }
  /// The script's snapshot of case `v` was taken in the bundle's warmup phase: the phase file
  /// said warmup before and after it, and its two /proc/uptime readings (CLOCK_BOOTTIME, equal
  /// to CLOCK_MONOTONIC in a guest that never suspends; printed truncated to 10 ms) lie inside
  /// [warmup start, warmup end).
  static void expect_snapshot_in_warmup(const std::string& v) {
    const std::string when = test_support::slurp(collect(v + ".warmup.when"));
    std::istringstream in(when);
    double t0 = -1, t1 = -1;
    std::string phase_after;
    in >> t0 >> t1 >> phase_after;
    EXPECT_EQ(phase_after, "warmup") << v << ": the phase file after the snapshot: " << when;
    const auto [start, end] = phase_ns(v, "warmup");
    EXPECT_TRUE(t0 * 1e9 + 1e7 >= static_cast<double>(start) && t1 * 1e9 < static_cast<double>(end))
        << v << ": snapshot at uptime [" << t0 << ", " << t1 << "] s, outside the warmup phase [" << start / 1e9 << ", "
        << end / 1e9 << ") s";
  }
  /// {samples, samples with a swapfile row in /proc/swaps} of the warmup phase (telemetry).
  static std::array<std::int64_t, 2> warmup_samples(const std::string& v) {
    const auto [start, end] = phase_ns(v, "warmup");
    results::Db db(bundle(v).string(), results::Db::Mode::ReadOnly);
    results::Stmt s(db, "SELECT count(*), count(swapfile_used_kib) FROM telemetry WHERE t_ns >= ?1 AND t_ns < ?2");
    s.bind(1, start).bind(2, end);
    EXPECT_TRUE(s.step());
    return {s.int64(0), s.int64(1)};
  }

  static inline test_support::GuestRun run_;
  static inline fs::path dir_;
};

}  // namespace

TEST_F(DelayedSwapfileVm, BothCasesCompleted) {
  EXPECT_EQ(run_.exec_rc, 0) << "see " << dir_ / "exec.log";
  for (const char* v : kValues) {
    EXPECT_EQ(test_support::slurp(collect(std::string(v) + ".rc")), "0\n")
        << v << ": " << test_support::slurp(collect(std::string(v) + ".stderr"));
    results::Db db(bundle(v).string(), results::Db::Mode::ReadOnly);
    results::Stmt s(db, "SELECT status FROM cases");
    ASSERT_TRUE(s.step()) << v;
    EXPECT_EQ(s.text(0), "completed") << v;
  }
}

TEST_F(DelayedSwapfileVm, ActiveSwapfileTakesPagesBeforeTheTrigger) {
  expect_snapshot_in_warmup("active");
  EXPECT_NE(test_support::slurp(collect("active.warmup.swaps")).find("/var/lib/harness/swapfile"), std::string::npos)
      << test_support::slurp(collect("active.warmup.swaps"));
  // The executor's own warmup samples: the swapfile has a /proc/swaps row in every one.
  const auto w = warmup_samples("active");
  EXPECT_TRUE(w[0] >= 2 && w[1] == w[0]) << w[1] << " of " << w[0] << " warmup samples have a swapfile row";
  const auto t = trigger_ns("active");
  ASSERT_TRUE(t) << "the trigger never fired in the active case";
  const long long kib = swapfile_used_kib_until("active", t);
  EXPECT_GT(kib, 0);
  std::cout << "[ measured ] active: swapfile Used at the trigger tick (max) " << kib << " KiB\n";
}

TEST_F(DelayedSwapfileVm, OffSwapfileTakesNothingBeforeTheTriggerAndJoinsAtIt) {
  expect_snapshot_in_warmup("off");
  const std::string warm = test_support::slurp(collect("off.warmup.swaps"));
  EXPECT_NE(warm.find("Filename"), std::string::npos) << "no /proc/swaps snapshot: " << warm;
  EXPECT_EQ(warm.find("/var/lib/harness/swapfile"), std::string::npos) << warm;
  EXPECT_EQ(warm.find("/dev/zram"), std::string::npos) << warm;
  const auto w = warmup_samples("off");
  EXPECT_TRUE(w[0] >= 2 && w[1] == 0) << w[1] << " of " << w[0] << " warmup samples have a swapfile row";
  // bg memory.high throttles pressure-gen (a bg memory stall) before memory.max could OOM-kill
  // it, so the trigger fires with no swap at all before it.
  const auto t = trigger_ns("off");
  ASSERT_TRUE(t) << "the trigger never fired in the off case";
  EXPECT_EQ(swapfile_used_kib_until("off", t), -1);  // no /proc/swaps row up to the trigger
  results::Db db(bundle("off").string(), results::Db::Mode::ReadOnly);
  results::Stmt e(db, "SELECT detail_json FROM controller_events WHERE kind = 'backend_on'");
  ASSERT_TRUE(e.step()) << "no backend_on event";
  const json d = json::parse(e.text(0));
  EXPECT_EQ(d["delayed_swapfile"], "off");
  ASSERT_TRUE(d.contains("swapfile_step")) << d.dump();
  EXPECT_EQ(d["swapfile_step"]["errno"], 0) << d.dump();
}
