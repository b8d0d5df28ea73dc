// vm-labelled test of backend.delayed_swapfile (harness/case/spec.hpp DelayedSwapfile): one
// fresh guest runs two short delayed-activation cases, one with the swapfile active from the
// start (the default) and one with it off until the trigger. Pressure crosses the bg limit
// a few seconds before the trigger can fire, so with `active` the swapfile (the only swap
// device then) takes pages before the trigger, and with `off` nothing can be swapped before
// it. Read from the bundles' telemetry (/proc/swaps Used of the swapfile at every tick up to
// the trigger tick, whose sample is read before the action) and from a /proc/swaps snapshot
// the guest script itself takes after each case's setup (not the code under test).
// ~2.5 min under TCG. Env: HARNESS_VM_DELAYED_SWAPFILE_KEEP=DIR keeps the collected output.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

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
                                       .zram_disksize_mib = 512, .allocation_mib = 320, .active_set_mib = 256});
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
      // A /proc/swaps snapshot in the warmup (2 s after the start), by the script.
      sc << "(sleep 2; cat /proc/swaps > /out/" << v << ".warmup.swaps) &\n";
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
  EXPECT_NE(test_support::slurp(collect("active.warmup.swaps")).find("/var/lib/harness/swapfile"), std::string::npos)
      << test_support::slurp(collect("active.warmup.swaps"));
  const auto t = trigger_ns("active");
  ASSERT_TRUE(t) << "the trigger never fired in the active case";
  const long long kib = swapfile_used_kib_until("active", t);
  EXPECT_GT(kib, 0);
  std::cout << "[ measured ] active: swapfile Used at the trigger tick (max) " << kib << " KiB\n";
}

TEST_F(DelayedSwapfileVm, OffSwapfileTakesNothingBeforeTheTriggerAndJoinsAtIt) {
  const std::string warm = test_support::slurp(collect("off.warmup.swaps"));
  EXPECT_EQ(warm.find("/var/lib/harness/swapfile"), std::string::npos) << warm;
  EXPECT_EQ(warm.find("/dev/zram"), std::string::npos) << warm;
  // With no swap at all before the trigger the limit may OOM-kill pressure-gen before three
  // counting windows: then the trigger never fires and the swapfile never joins.
  const auto t = trigger_ns("off");
  EXPECT_EQ(swapfile_used_kib_until("off", t), -1);  // no /proc/swaps row up to the trigger
  std::cout << "[ measured ] off: trigger " << (t ? "fired" : "never fired") << "\n";
  if (!t) return;
  results::Db db(bundle("off").string(), results::Db::Mode::ReadOnly);
  results::Stmt e(db, "SELECT detail_json FROM controller_events WHERE kind = 'backend_on'");
  ASSERT_TRUE(e.step()) << "no backend_on event";
  const json d = json::parse(e.text(0));
  EXPECT_EQ(d["delayed_swapfile"], "off");
  ASSERT_TRUE(d.contains("swapfile_step")) << d.dump();
  EXPECT_EQ(d["swapfile_step"]["errno"], 0) << d.dump();
}
