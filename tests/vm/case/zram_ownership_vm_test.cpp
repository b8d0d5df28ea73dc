// vm-labelled test of device ownership and leftover causes (a leftover
// is named by its cause, not its symptom), in one fresh qemu guest (TCG is fine, ~3 min):
//
//  1. A leftover swap device that cannot be released. The campaign's swapfile is swapped
//     on and a process outside the case's cgroups (cgroup /holder, memory.max 24 MiB,
//     oom_score_adj -1000, then SIGSTOPped) has tens of MiB swapped out to it. swapoff
//     must fault them back into /holder, which cannot take them and has nobody the OOM
//     killer may pick: ENOMEM. The case must stop before creating its cgroups, and say
//     that swapoff failed with ENOMEM and which process holds the memory.
//  2. A foreign zram device. After the holder is killed, zram0 (the module's default
//     device, as zram-tools would use it) is configured and swapped on before a short
//     static-zram case. The case must leave it untouched (same disksize and algorithm,
//     still active swap with the same priority and used), create its own device through
//     zram-control/hot_add and remove it with hot_remove (gone afterwards).
//  3. A second case on the same guest (a reused VM): the first case that
//     reached setup established the VM's MemAvailable baseline after drop_caches and
//     compaction; the second is judged against it, and both record nr_dying_descendants.
//  4. An interrupted backend setup, twice: `harness case run` is SIGKILLed right after its
//     backend came on, as the guest script sees it in /proc/swaps (the harness's device,
//     /dev/zram1 and up, listed there): a static-zram case at its setup's swapon, and a
//     delayed-activation case at the swapon of its trigger (the phase file then says pressure).
//     Each time a short static-zram case follows on the same guest and must complete, its
//     leftover cleanup (outcome_json.leftover_steps) having swapped off and hot_removed the
//     killed case's device with errno 0; afterwards the script finds the ownership marker gone,
//     no harness device in /proc/swaps, and /sys/block/zram* as before the killed case (the
//     foreign zram0 of 2 stays active throughout).
// The guest script reads the host state itself (/proc/swaps, sysfs, cgroup tree); the
// test checks those readings and the bundles.
// Env: HARNESS_VM_ZRAM_KEEP=DIR keeps the collected output; HARNESS_VM_CASE_CACHE as in
// case_vm_test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "results/db.hpp"
#include "tests/common/guest_exec.hpp"
#include "tests/common/vm_case_spec.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using test_support::slurp;

namespace {

json spec(const std::string& id) {
  // Small bg limit: TCG allocates ~18 MiB/s, so the limit is reached ~4 s into pressure.
  return test_support::vm_case_spec(id, "static-zram",
                                    {.warmup_s = 2, .pressure_s = 10, .recovery_s = 2, .bg_memory_max_mib = 64,
                                     .zram_disksize_mib = 256, .allocation_mib = 128, .active_set_mib = 96});
}

/// 4: the case killed at the swapon of its trigger. bg memory.high (48 MiB) below memory.max
/// (96 MiB): over memory.high the kernel throttles pressure-gen (a bg memory stall) instead of
/// OOM-killing it, so the trigger fires a few seconds into pressure (about 3 s to reach 48 MiB at
/// TCG's ~18 MiB/s, then three 1 s windows); 30 s of pressure is only the bound.
json cut_delayed_spec() {
  return test_support::vm_case_spec("zram-cut-delayed", "delayed-activation",
                                    {.warmup_s = 1, .pressure_s = 30, .recovery_s = 1, .bg_memory_max_mib = 96,
                                     .bg_memory_high_mib = 48, .zram_disksize_mib = 256, .allocation_mib = 160,
                                     .active_set_mib = 128});
}

/// 4: the case killed at its setup's swapon of zram, and the short cases that follow a kill.
json short_static_spec(const std::string& id) {
  return test_support::vm_case_spec(id, "static-zram",
                                    {.warmup_s = 1, .pressure_s = 1, .recovery_s = 1, .bg_memory_max_mib = 64,
                                     .zram_disksize_mib = 64, .allocation_mib = 96, .active_set_mib = 32});
}

/// 4: the guest script's part for one interrupted case `tag` (spec /out/cut-<tag>.json, output
/// /out/cut): the zram devices before it, the case started in the background and SIGKILLed once
/// /proc/swaps lists a harness device (polled every 50 ms, at most 120 s), then what the kill
/// left: exit status, /proc/swaps, the ownership marker, the phase file and the zram devices;
/// then the case that follows (/out/after-<tag>.json into /out/bundles) and the host after it.
std::string interrupted_then_next(const std::string& tag) {
  const std::string c = "/out/cut-" + tag, a = "/out/after-" + tag;
  std::ostringstream sc;
  sc << "ls -d /sys/block/zram* > " << c << ".before.devices\n"
     << "harness case run --spec " << c << ".json --out /out/cut --min-free-disk-mib 64 > " << c << ".stdout 2> " << c
     << ".stderr &\nCUT=$!\n"
     << "i=0; while [ $i -lt 2400 ] && ! grep -q '^/dev/zram[1-9]' /proc/swaps; do sleep 0.05; i=$((i+1)); done\n"
     << "kill -9 $CUT; wait $CUT; echo $? > " << c << ".rc\n"
     << "cat /proc/swaps > " << c << ".killed.swaps\n"
     << "cat /run/reclaim-harness/zram-device > " << c << ".killed.marker\n"
     << "cat /out/cut/phase > " << c << ".killed.phase\n"
     << "ls -d /sys/block/zram* > " << c << ".killed.devices\n"
     << "harness case run --spec " << a << ".json --out /out/bundles --min-free-disk-mib 64 > " << a << ".stdout 2> " << a
     << ".stderr\necho $? > " << a << ".rc\n"
     << "cat /proc/swaps > " << a << ".swaps\n"
     << "if [ -e /run/reclaim-harness/zram-device ]; then echo PRESENT; else echo ABSENT; fi > " << a << ".marker\n"
     << "ls -d /sys/block/zram* > " << a << ".devices\n";
  return sc.str();
}

/// The /proc/swaps line of `dev` split into words ("" fields when absent).
std::vector<std::string> swap_line(const std::string& swaps, const std::string& dev) {
  std::istringstream in(swaps);
  for (std::string l; std::getline(in, l);) {
    std::istringstream w(l);
    std::vector<std::string> f;
    for (std::string x; w >> x;) f.push_back(x);
    if (!f.empty() && f[0] == dev) return f;
  }
  return {};
}

class ZramOwnershipVm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ostringstream sc;
    sc << "set -x\nmkdir -p /out/bundles\n";
    for (const char* id : {"held", "foreign", "again"})
      sc << "cat > /out/" << id << ".json <<'EOF'\n" << spec(std::string("zram-") + id).dump(2) << "\nEOF\n";
    for (const auto& [file, j] : {std::pair<std::string, json>{"cut-static", short_static_spec("zram-cut-static")},
                                  {"cut-delayed", cut_delayed_spec()},
                                  {"after-static", short_static_spec("zram-after-static")},
                                  {"after-delayed", short_static_spec("zram-after-delayed")}})
      sc << "cat > /out/" << file << ".json <<'EOF'\n" << j.dump(2) << "\nEOF\n";
    // --- 1: the swapfile held by a stopped process outside the case --------------------
    sc << "swapon /var/lib/harness/swapfile\n"
          "mkdir /sys/fs/cgroup/holder && echo 24M > /sys/fs/cgroup/holder/memory.max\n"
          "sh -c 'echo $$ > /sys/fs/cgroup/holder/cgroup.procs; echo -1000 > /proc/self/oom_score_adj; exec "
          "pressure-gen --allocation-mib 64 --rate-mib-s 64 --active-set-mib 4 --contents random --seed 1 "
          "--duration-s 900' > /out/holder.stdout 2>&1 &\n"
          "HOLDER=$!\n"
          // Wait until at least 16 MiB of it is swapped out (TCG allocates slowly).
          "for i in $(seq 1 120); do s=$(awk '/^VmSwap/ {print $2}' /proc/$HOLDER/status); "
          "[ \"${s:-0}\" -ge 16384 ] && break; sleep 1; done\n"
          // SIGSTOP is delivered when the holder next runs: wait until it shows as stopped.
          "kill -STOP $HOLDER\n"
          "for i in $(seq 1 100); do grep -q '^State:[[:space:]]*T' /proc/$HOLDER/status && break; sleep 0.1; done\n"
          "echo $HOLDER > /out/holder.pid\n"
          "grep -E '^(State|VmSwap)' /proc/$HOLDER/status > /out/holder.status\n"
          "cat /proc/swaps > /out/held.before.swaps\n";
    sc << "harness case run --spec /out/held.json --out /out/bundles"
       << " --min-free-disk-mib 64 > /out/held.stdout 2> /out/held.stderr\necho $? > /out/held.rc\n";
    sc << "if [ -e /sys/fs/cgroup/harness ]; then echo PRESENT; else echo ABSENT; fi > /out/held.after.cgroups\n"
          "cat /proc/swaps > /out/held.after.swaps\n"
          "kill -9 $HOLDER; wait $HOLDER; swapoff /var/lib/harness/swapfile; rmdir /sys/fs/cgroup/holder\n"
          "cat /proc/swaps > /out/released.swaps\n";
    // --- 2: a foreign zram0, active swap, across a whole case ----------------------------
    sc << "echo lzo-rle > /sys/block/zram0/comp_algorithm && echo 64M > /sys/block/zram0/disksize && "
          "mkswap /dev/zram0 && swapon /dev/zram0\n";
    auto snapshot = [&](const std::string& tag) {
      sc << "cat /proc/swaps > /out/foreign." << tag << ".swaps\n"
         << "cat /sys/block/zram0/disksize > /out/foreign." << tag << ".disksize\n"
         << "cat /sys/block/zram0/comp_algorithm > /out/foreign." << tag << ".alg\n"
         << "ls -d /sys/block/zram* > /out/foreign." << tag << ".devices\n";
    };
    snapshot("before");
    sc << "harness case run --spec /out/foreign.json --out /out/bundles"
       << " --min-free-disk-mib 64 > /out/foreign.stdout 2> /out/foreign.stderr\necho $? > /out/foreign.rc\n";
    snapshot("after");
    // --- 3: a second case on the same (reused) guest: judged against the first's baseline.
    sc << "harness case run --spec /out/again.json --out /out/bundles"
       << " --min-free-disk-mib 64 > /out/again.stdout 2> /out/again.stderr\necho $? > /out/again.rc\n"
       << "cat /run/reclaim-harness/baseline > /out/baseline.txt\n";
    // --- 4: an interrupted backend setup (static, then delayed), each followed by a case.
    // Its wall time, read by the script (the test prints it): /proc/uptime before and after.
    sc << "cut -d' ' -f1 /proc/uptime > /out/part4.start\n"
       << interrupted_then_next("static") << interrupted_then_next("delayed")
       << "cut -d' ' -f1 /proc/uptime > /out/part4.end\n";
    run_ = test_support::run_in_guest(sc.str(), "HARNESS_VM_ZRAM_KEEP", "zram_ownership_vm_test", 900);
  }
  // A guest that never ran fails every test of the suite (tests/README.md: never a skip).
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(test_support::require_guest_ran(run_)); }

  static std::string out(const std::string& f) { return slurp(run_.out(f)); }
  static fs::path bundle(const std::string& id) { return run_.out("bundles/zram-" + id + ".db"); }

  /// 4: what one SIGKILLed case (`tag`: static or delayed) left, and the case after it.
  static void expect_interrupted_backend_released(const std::string& tag, const std::string& phase_at_kill) {
    const std::string c = "cut-" + tag, a = "after-" + tag;
    // The kill, as the script saw it: the executor died of SIGKILL while the ownership marker named
    // a hot-added device that was active swap.
    EXPECT_EQ(out(c + ".rc"), "137\n") << "the case was not killed by SIGKILL: " << out(c + ".stderr");
    const auto id_line = swap_line(out(c + ".killed.marker"), "id");
    ASSERT_EQ(id_line.size(), 2u) << "no ownership marker after the kill:\n" << out(c + ".killed.marker");
    const std::string id = id_line[1], dev = "/dev/zram" + id;
    EXPECT_EQ(swap_line(out(c + ".killed.marker"), "how"), (std::vector<std::string>{"how", "hot_add"}));
    ASSERT_EQ(swap_line(out(c + ".killed.swaps"), dev).size(), 5u)
        << dev << " was not active swap when the case was killed:\n" << out(c + ".killed.swaps");
    EXPECT_EQ(swap_line(out(c + ".killed.swaps"), "/var/lib/harness/swapfile").size(), 5u) << out(c + ".killed.swaps");
    if (!phase_at_kill.empty()) {
      EXPECT_EQ(out(c + ".killed.phase"), phase_at_kill + "\n");
    }
    EXPECT_NE(out(c + ".killed.devices").find("/sys/block/zram" + id + "\n"), std::string::npos);

    // The next case completed, and its leftover cleanup released the killed case's device.
    EXPECT_EQ(out(a + ".rc"), "0\n") << out(a + ".stderr");
    const auto path = run_.out("bundles/zram-" + a + ".db");
    ASSERT_TRUE(fs::exists(path)) << path;
    results::Db db(path.string(), results::Db::Mode::ReadOnly);
    results::Stmt q(db, "SELECT status, error, outcome_json FROM cases");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.text(0), "completed") << q.opt_text(1).value_or("");
    const auto steps = json::parse(q.text(2))["leftover_steps"];
    ASSERT_TRUE(steps.is_array()) << q.text(2);
    std::map<std::string, int> errno_of;
    for (const auto& st : steps) errno_of[st["step"].get<std::string>()] = st["errno"].get<int>();
    for (const std::string& step : std::vector<std::string>{"leftover swapoff /var/lib/harness/swapfile",
                                                             "leftover swapoff " + dev, "leftover zram reset",
                                                             "leftover zram hot_remove zram" + id}) {
      ASSERT_EQ(errno_of.count(step), 1u) << "no step '" << step << "' in " << steps.dump();
      EXPECT_EQ(errno_of[step], 0) << step << ": " << steps.dump();
    }
    for (const auto& st : steps) EXPECT_EQ(st["errno"], 0) << st.dump();
    results::Stmt r(db, "SELECT clean, detail_json FROM restoration");
    ASSERT_TRUE(r.step());
    EXPECT_EQ(r.int64(0), 1) << r.text(1);

    // The host after it, read by the script: no marker, no harness device in /proc/swaps (zram0,
    // the foreign device, still there), the zram devices as before the killed case.
    EXPECT_EQ(out(a + ".marker"), "ABSENT\n");
    std::istringstream swaps(out(a + ".swaps"));
    std::string line;
    std::getline(swaps, line);  // the header
    int lines = 0;
    for (; std::getline(swaps, line); ++lines)
      EXPECT_EQ(line.rfind("/dev/zram0 ", 0), 0u) << "a device other than the foreign zram0 is active: " << line;
    EXPECT_EQ(lines, 1) << out(a + ".swaps");
    EXPECT_EQ(out(a + ".devices"), out(c + ".before.devices"));
  }

  static inline test_support::GuestRun run_;
};

}  // namespace

TEST_F(ZramOwnershipVm, GuestScriptRan) {
  EXPECT_EQ(run_.exec_rc, 0) << "see " << run_.dir / "exec.log" << " and " << run_.out("console.log");
  const std::string start = out("part4.start"), end = out("part4.end");
  if (!start.empty() && !end.empty())
    std::printf("part 4 (two interrupted cases and the cases after them): %.1f s in the guest\n",
                std::stod(end) - std::stod(start));
}

// The case stops before setup, naming swapoff's errno and the holder.
TEST_F(ZramOwnershipVm, UnreleasableLeftoverStopsBeforeSetupNamingSwapoffErrno) {
  const std::string holder = out("holder.pid");
  ASSERT_FALSE(holder.empty()) << "holder not started";
  const std::string status = out("holder.status");
  ASSERT_NE(status.find("T (stopped)"), std::string::npos) << status;
  // The precondition, read by the script: the swapfile held pages before the case.
  const auto before = swap_line(out("held.before.swaps"), "/var/lib/harness/swapfile");
  ASSERT_EQ(before.size(), 5u) << out("held.before.swaps");
  ASSERT_GE(std::stoll(before[3]), 16384) << "fewer than 16 MiB swapped out before the case";

  EXPECT_EQ(out("held.rc"), "3\n") << out("held.stderr");
  EXPECT_EQ(out("held.after.cgroups"), "ABSENT\n") << "the case created its cgroups";
  ASSERT_TRUE(fs::exists(bundle("held")));
  results::Db db(bundle("held").string(), results::Db::Mode::ReadOnly);
  results::Stmt c(db, "SELECT status, error, outcome_json FROM cases");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.text(0), "infra_failed");
  const std::string err = c.opt_text(1).value_or("");
  EXPECT_NE(err.find("leftover swapoff /var/lib/harness/swapfile failed with ENOMEM"), std::string::npos) << err;
  std::string pid = holder;
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  EXPECT_NE(err.find("pid " + pid + " pressure-gen (T (stopped), cgroup /holder)"), std::string::npos) << err;
  const auto o = json::parse(c.text(2));
  EXPECT_FALSE(o.contains("setup_steps")) << o.dump();
  ASSERT_FALSE(o["leftover_steps"].empty());
  EXPECT_EQ(o["leftover_steps"].back()["errno"], 12) << o["leftover_steps"].dump();  // ENOMEM
  // The harness did not hot_add a device for a case that never started.
  EXPECT_FALSE(o.contains("zram")) << o.dump();
  // And the host could be released by hand afterwards (the test's own cleanup worked).
  EXPECT_TRUE(swap_line(out("released.swaps"), "/var/lib/harness/swapfile").empty()) << out("released.swaps");
}

// The foreign zram0 is untouched across a whole case.
TEST_F(ZramOwnershipVm, ForeignZramIsLeftUntouchedAcrossAWholeCase) {
  EXPECT_EQ(out("foreign.rc"), "0\n") << out("foreign.stderr");
  const auto before = swap_line(out("foreign.before.swaps"), "/dev/zram0");
  const auto after = swap_line(out("foreign.after.swaps"), "/dev/zram0");
  ASSERT_EQ(before.size(), 5u) << "zram0 was not swapped on before the case:\n" << out("foreign.before.swaps");
  ASSERT_EQ(after.size(), 5u) << "zram0 no longer active swap after the case:\n" << out("foreign.after.swaps");
  EXPECT_EQ(after[2], before[2]) << "size";
  EXPECT_EQ(after[3], before[3]) << "used";
  EXPECT_EQ(after[4], before[4]) << "priority";
  EXPECT_EQ(out("foreign.after.disksize"), out("foreign.before.disksize"));
  EXPECT_EQ(out("foreign.before.disksize"), "67108864\n");
  EXPECT_EQ(out("foreign.after.alg"), out("foreign.before.alg"));
  // No zram device left behind by the case: the same set before and after.
  EXPECT_EQ(out("foreign.after.devices"), out("foreign.before.devices"));
}

TEST_F(ZramOwnershipVm, HarnessCreatesAndRemovesItsOwnDevice) {
  ASSERT_TRUE(fs::exists(bundle("foreign")));
  results::Db db(bundle("foreign").string(), results::Db::Mode::ReadOnly);
  results::Stmt c(db, "SELECT status, error, outcome_json, qualification_json FROM cases");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.text(0), "completed") << c.opt_text(1).value_or("");
  const auto o = json::parse(c.text(2));
  const auto& z = o["zram"];
  ASSERT_TRUE(z.is_object()) << o.dump();
  EXPECT_EQ(z["how"], "hot_add");
  EXPECT_EQ(z["released"], true);
  EXPECT_NE(z["device"], "/dev/zram0");
  const std::string dev = z["device"];
  EXPECT_EQ(o["zram_device"], dev);
  EXPECT_NE(o["setup_steps"].dump().find("zram hot_add -> zram" + std::to_string(z["id"].get<int>())),
            std::string::npos)
      << o["setup_steps"].dump();
  // Its device is gone (read by the script), zram0 is still there.
  const std::string devices = out("foreign.after.devices");
  EXPECT_EQ(devices.find("/sys/block/zram" + std::to_string(z["id"].get<int>()) + "\n"), std::string::npos) << devices;
  EXPECT_NE(devices.find("/sys/block/zram0\n"), std::string::npos) << devices;
  // The device carried the case's swap: telemetry saw it in use during pressure.
  results::Stmt t(db, "SELECT MAX(zram_swap_used_kib) FROM telemetry WHERE phase='pressure'");
  ASSERT_TRUE(t.step());
  EXPECT_FALSE(t.is_null(0));
  EXPECT_GT(t.int64(0), 0);
  // Restoration verified clean (it checks the device is gone), and qualification
  // reported zram0 as foreign active swap, below the case's priorities.
  results::Stmt r(db, "SELECT clean, detail_json FROM restoration");
  ASSERT_TRUE(r.step());
  EXPECT_EQ(r.int64(0), 1) << r.text(1);
  EXPECT_NE(r.text(1).find("zram hot_remove"), std::string::npos) << r.text(1);
  const auto q = json::parse(c.text(3));
  std::string foreign;
  for (const auto& ch : q["checks"])
    if (ch["name"] == "foreign_zram") foreign = ch["found"];
  EXPECT_NE(foreign.find("/dev/zram0 (active swap"), std::string::npos) << q.dump();
}

// Between cases on a reused VM (guest side): the baseline of the first case and the
// judgement of the next on the same guest, with cgroup.stat recorded in both.
TEST_F(ZramOwnershipVm, ReusedGuestIsJudgedAgainstTheFirstCaseBaseline) {
  EXPECT_EQ(out("again.rc"), "0\n") << out("again.stderr");
  json first, second;
  for (auto [id, dst] : {std::pair<const char*, json*>{"foreign", &first}, {"again", &second}}) {
    ASSERT_TRUE(fs::exists(bundle(id))) << id;
    results::Db db(bundle(id).string(), results::Db::Mode::ReadOnly);
    results::Stmt c(db, "SELECT outcome_json FROM cases");
    ASSERT_TRUE(c.step());
    *dst = json::parse(c.text(0))["vm_state"];
    ASSERT_TRUE(dst->is_object()) << id;
    for (const char* when : {"start", "end"}) {
      EXPECT_TRUE((*dst)[when]["mem_available_kib"].is_number_integer()) << id << " " << dst->dump();
      EXPECT_TRUE((*dst)[when]["nr_dying_descendants"].is_number_integer()) << id << " " << dst->dump();
    }
    for (const auto& st : (*dst)["start"]["steps"]) EXPECT_EQ(st["errno"], 0) << st.dump();
  }
  EXPECT_EQ(first["baseline"]["established_by_this_case"], true) << first.dump();
  EXPECT_EQ(first["baseline"]["case_id"], "zram-foreign");
  EXPECT_EQ(first["baseline"]["mem_available_kib"], first["start"]["mem_available_kib"]);
  EXPECT_EQ(second["baseline"]["established_by_this_case"], false) << second.dump();
  EXPECT_EQ(second["baseline"]["case_id"], "zram-foreign");
  EXPECT_EQ(second["baseline"]["mem_available_kib"], first["baseline"]["mem_available_kib"]);
  ASSERT_TRUE(second["baseline_check"].is_object()) << second.dump();
  EXPECT_EQ(second["baseline_check"]["judged"], true);
  EXPECT_EQ(second["baseline_check"]["within"], true) << second.dump();
  EXPECT_GT(second["baseline_check"]["tolerance_kib"].get<std::int64_t>(), 0);
  EXPECT_NE(out("baseline.txt").find("case_id zram-foreign"), std::string::npos) << out("baseline.txt");
}

// 4: SIGKILL right after the static arm's setup swapped zram on, then a case on the same guest.
TEST_F(ZramOwnershipVm, InterruptedStaticSetupIsReleasedByTheNextCase) {
  expect_interrupted_backend_released("static", "");
}

// 4: SIGKILL right after delayed-activation's swapon of zram at its trigger, then a case.
TEST_F(ZramOwnershipVm, InterruptedDelayedActivationIsReleasedByTheNextCase) {
  expect_interrupted_backend_released("delayed", "pressure");
}
