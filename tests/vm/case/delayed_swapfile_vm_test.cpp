// vm-labelled test of backend.delayed_swapfile (harness/case/spec/spec.hpp DelayedSwapfile): one
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
// The same guest, under the same bg memory.high, then runs the memory-high policy
// (harness/case/policies/memory_high.cpp), which sets bg memory.high to 0.9 x memory.current at
// the trigger and writes the old value back after the schedule: the guest script reads bg
// memory.high from before the case until the cgroup is gone (shell builtins; every 0.2 s, and
// without a pause once the policy has set it) and logs each value it sees with /proc/uptime, so
// the set and the restore are checked against readings the code under test did not make.
// 106 s under TCG (loaded 2-core machine). Env: HARNESS_VM_DELAYED_SWAPFILE_KEEP=DIR keeps the collected output.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

/// The memory-high case: the delayed-activation cases' pressure, bg memory.high 64 MiB (half
/// theirs, so that the trigger fires within the phase even when the guest allocates at a
/// fraction of 64 MiB/s on a loaded host), the memory-high policy at fraction 0.9.
json memory_high_spec() {
  json s = spec_for("active");
  s["case_id"] = "vmtest-memory-high";
  s["cgroups"]["bg_memory_high_bytes"] = 64ll << 20;
  s["configuration"] = "memory-high";
  s["policy"] = {{"name", "memory-high"}, {"params", {{"fraction", 0.9}}}};
  return s;
}

/// The script's log of bg memory.high: one line "<uptime s> <value>" per change, from before
/// the case ("gone") until the cgroup is removed again, read with shell builtins. Every 0.2 s
/// until the value differs from the spec's (the policy set it at the trigger), then without a
/// pause: the restore is written after the schedule and restoration removes the cgroup tens of
/// ms later when little is swapped (measured: 60 ms), so only a read that never sleeps sees it.
const char* kMemoryHighWatch =
    "(f=/sys/fs/cgroup/harness/bg/memory.high; last=; base=; fast=; i=0; while [ $i -lt 100000 ]; do "
    "{ read -r v < $f; } 2>/dev/null || v=gone; "
    "if [ \"$v\" != \"$last\" ]; then read -r up x < /proc/uptime; echo \"$up $v\" >> /out/memory-high.watch; last=$v; fi; "
    "if [ \"$v\" = gone ]; then [ -n \"$base\" ] && break; "
    "elif [ \"$v\" = max ]; then :; elif [ -z \"$base\" ]; then base=$v; elif [ \"$v\" != \"$base\" ]; then fast=1; fi; "
    "i=$((i+1)); [ -n \"$fast\" ] || sleep 0.2; done) &\n";

class DelayedSwapfileVm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ostringstream sc;
    sc << "set -x\nmkdir -p /out/bundles\n";
    sc << "cat > /out/memory-high.json <<'EOF'\n" << memory_high_spec().dump(2) << "\nEOF\n";
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
    sc << kMemoryHighWatch;
    sc << "harness case run --spec /out/memory-high.json --out /out/bundles --min-free-disk-mib 64 > /out/memory-high.stdout "
          "2> /out/memory-high.stderr\necho $? > /out/memory-high.rc\nwait\n";
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

// memory-high in a real guest: set at the trigger to the decision's value, written back to the
// spec's 64 MiB after the schedule, as the guest script read bg memory.high itself.
TEST_F(DelayedSwapfileVm, MemoryHighIsSetAtTheTriggerAndRestoredAsTheGuestReadsIt) {
  EXPECT_EQ(test_support::slurp(collect("memory-high.rc")), "0\n") << test_support::slurp(collect("memory-high.stderr"));
  const fs::path b = collect("bundles/vmtest-memory-high.db");
  results::Db db(b.string(), results::Db::Mode::ReadOnly);
  results::Stmt st(db, "SELECT status FROM cases");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "completed");
  const auto event = [&](const std::string& kind) -> std::optional<std::pair<std::int64_t, json>> {
    results::Stmt e(db, "SELECT t_ns, detail_json FROM controller_events WHERE kind = ?1 ORDER BY t_ns");
    e.bind(1, kind);
    if (!e.step()) return std::nullopt;
    return std::pair{e.int64(0), json::parse(e.text(1))};
  };
  const auto trigger = event("trigger"), decision = event("policy_decision"), set = event("memory_high_set"),
             restore = event("memory_high_restore");
  ASSERT_TRUE(trigger && decision && set && restore) << "trigger, decision, set and restore events";
  EXPECT_EQ(decision->first, trigger->first) << "decided at the trigger's tick";
  EXPECT_EQ(decision->second["old_memory_high"], 64ll << 20);
  const auto high = decision->second["memory_high_bytes"].get<long long>();
  EXPECT_EQ(high, static_cast<long long>(std::floor(0.9 * decision->second["memory_current_bytes"].get<double>())));
  EXPECT_EQ(set->second["errno"], 0) << set->second.dump();
  EXPECT_EQ(restore->second["errno"], 0) << restore->second.dump();
  EXPECT_EQ(restore->second["memory_high"], 64ll << 20);
  // The guest's own reads: gone, 64 MiB (setup), the set value (the kernel keeps whole pages),
  // 64 MiB again after the restore was written, gone (restoration removed the cgroup).
  std::istringstream watch(test_support::slurp(collect("memory-high.watch")));
  std::vector<std::pair<double, std::string>> seen;
  double up = 0;
  std::string v;
  while (watch >> up >> v) seen.emplace_back(up, v);
  // A new cgroup reads "max" until setup writes the spec's memory.high: seen or not, by timing.
  if (seen.size() > 1 && seen[1].second == "max") seen.erase(seen.begin() + 1);
  std::vector<std::string> values;
  for (const auto& [t, value] : seen) values.push_back(value);
  const std::string base = std::to_string(64ll << 20), set_value = std::to_string(high / 4096 * 4096);
  ASSERT_EQ(values, (std::vector<std::string>{"gone", base, set_value, base, "gone"}))
      << test_support::slurp(collect("memory-high.watch"));
  // Read after the events said so (uptime, CLOCK_BOOTTIME, is CLOCK_MONOTONIC in a guest that
  // never suspends; printed to 10 ms).
  EXPECT_GE(seen[2].first * 1e9 + 1e7, static_cast<double>(set->second["start_ns"].get<std::int64_t>()));
  EXPECT_GE(seen[3].first * 1e9 + 1e7, static_cast<double>(restore->second["start_ns"].get<std::int64_t>()));
  std::cout << "[ measured ] memory-high: set " << high << " B at the trigger; the guest read " << set_value << " at "
            << seen[2].first << " s and " << base << " again at " << seen[3].first << " s\n";
}
