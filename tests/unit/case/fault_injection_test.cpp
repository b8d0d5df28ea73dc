// Kernel-interface faults (kernel::Fs::inject_fault) driven through the real case code
// over a scratch copy of the 6.1 guest capture (tests/fixtures/6.1.0-57-cloud-amd64):
//   - executor: a setup failure (EPERM on mkdir of the parent cgroup) -> infra_failed,
//     before any workload or pressure, restoration still recorded;
//   - CaseCgroups: setup failure names the step and errno; rmdir EBUSY and a populated
//     cgroup (kill_all timeout) during restoration are recorded, never thrown;
//   - Backend: prepare failure (EBUSY disksize, ENOMEM mkswap, EPERM swapon) names the
//     step; a failed delayed swapon (EBUSY) is an outcome, not an exception; swapoff
//     ENOMEM/EINTR in teardown is recorded with its errno and makes restoration unclean;
//   - ReclaimAction: EAGAIN / EINTR from memory.reclaim recorded, and the write made once
//     (never retried).
// The whole executor cannot run a case to completion over a fixture tree (mkdir makes
// empty directories, not cgroups), so the restoration and delayed-swapon cases test the
// smallest real units that hold the logic: Backend, CaseCgroups, ReclaimAction.
// swapon/swapoff/mkswap are always stubbed (err 0 = pretend success): the tests run as
// root and must never reach the real syscalls.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "harness/case/backend.hpp"
#include "harness/case/case_cgroups.hpp"
#include "harness/case/executor.hpp"
#include "harness/case/reclaim_action.hpp"
#include "harness/case/restoration_check.hpp"
#include "harness/case/spec.hpp"
#include "harness/kernel/swap.hpp"
#include "results/db.hpp"
#include "tests/common/agent_support.hpp"

namespace fs = std::filesystem;
using kernel::FaultScope;
using kernel::FsOp;

namespace {

const std::string kCapture = std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/6.1.0-57-cloud-amd64/root";
const std::string kSwapfile = "/var/lib/harness/swapfile";

/// A scratch copy of the capture (removed at destruction).
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "hk-case-fault-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
    fs::copy(kCapture, dir_ / "root", fs::copy_options::recursive);
    // A valid swapfile (no holes, signature), as validate_swapfile wants it.
    const long page = ::sysconf(_SC_PAGESIZE);
    std::string img(static_cast<size_t>(page) * 16, '\0');
    std::memcpy(&img[static_cast<size_t>(page) - 10], "SWAPSPACE2", 10);
    fs::create_directories(root() / "var/lib/harness");
    std::ofstream(root() / "var/lib/harness/swapfile", std::ios::binary) << img;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path root() const { return dir_ / "root"; }
  const fs::path& dir() const { return dir_; }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((root() / rel).parent_path());
    std::ofstream(root() / rel) << text;
  }
  std::string get(const std::string& rel) const {
    std::ifstream in(root() / rel);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

 private:
  fs::path dir_;
};

hcase::BackendSpec backend_spec() {
  hcase::BackendSpec b;
  b.zram_disksize_bytes = 512ll << 20;
  b.zram_algorithm = "lzo-rle";
  b.zram_priority = 100;
  b.swapfile_path = kSwapfile;
  b.swapfile_priority = 10;
  return b;
}

/// Stubs every swap syscall on the case's devices (pretend success).
void stub_swap(FaultScope& f) {
  for (FsOp op : {FsOp::Swapon, FsOp::Swapoff, FsOp::Mkswap}) {
    f.fail("/dev/zram0", 0, op);
    f.fail(kSwapfile, 0, op);
  }
}

const hcase::StepRecord* find_step(const std::vector<hcase::StepRecord>& steps, const std::string& prefix) {
  for (const auto& s : steps)
    if (s.step.rfind(prefix, 0) == 0) return &s;
  return nullptr;
}

std::string dump(const std::vector<hcase::StepRecord>& steps) {
  std::string out;
  for (const auto& s : steps) out += s.to_json().dump() + "\n";
  return out;
}

}  // namespace

// ---------------------------------------------------------------- Backend ----------

TEST(FaultBackend, PrepareFailureNamesTheStepAndErrno) {
  struct Case {
    const char* path;
    FsOp op;
    int err;
    const char* step;
  };
  for (const Case& c : {Case{"zram0/disksize", FsOp::Write, EBUSY, "zram disksize"},
                        Case{"/dev/zram0", FsOp::Mkswap, ENOMEM, "mkswap /dev/zram0"},
                        Case{kSwapfile.c_str(), FsOp::Swapon, EPERM, "swapon /var/lib/harness/swapfile"},
                        Case{"zram0/comp_algorithm", FsOp::Write, EINTR, "zram comp_algorithm"}}) {
    SCOPED_TRACE(c.step);
    Scratch t;
    FaultScope f;
    f.fail(c.path, c.err, c.op);  // first match wins: set before the stubs
    stub_swap(f);
    hcase::Backend b(kernel::Fs(t.root()), backend_spec(), hcase::Configuration::StaticZram);
    std::vector<hcase::StepRecord> steps;
    try {
      b.prepare(steps);
      ADD_FAILURE() << "prepare succeeded despite the fault";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(c.step), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("errno " + std::to_string(c.err)), std::string::npos) << e.what();
    }
    ASSERT_FALSE(steps.empty());
    EXPECT_EQ(steps.back().step.rfind(c.step, 0), 0u) << dump(steps);
    EXPECT_EQ(steps.back().err, c.err);
    EXPECT_EQ(kernel::Fs::fault_hits(c.path), 1);
  }
}

TEST(FaultBackend, FailedDelayedSwaponIsAnOutcomeNotAnException) {
  Scratch t;
  FaultScope f;
  f.fail("/dev/zram0", EBUSY, FsOp::Swapon);
  stub_swap(f);
  hcase::Backend b(kernel::Fs(t.root()), backend_spec(), hcase::Configuration::DelayedActivation);
  std::vector<hcase::StepRecord> steps;
  ASSERT_NO_THROW(b.prepare(steps)) << dump(steps);
  // Delayed: zram prepared but not swapped on by prepare (the fault was not consumed).
  EXPECT_EQ(find_step(steps, "swapon /dev/zram0"), nullptr) << dump(steps);
  hcase::StepRecord on;
  ASSERT_NO_THROW(on = b.activate());
  EXPECT_EQ(on.step, "swapon /dev/zram0 prio 100");
  EXPECT_EQ(on.err, EBUSY);
  EXPECT_NE(on.message.find("errno " + std::to_string(EBUSY)), std::string::npos) << on.message;
  EXPECT_EQ(on.to_json()["errno"], EBUSY);
  EXPECT_FALSE(b.zram_on());
  EXPECT_EQ(b.enabled_paths(), std::vector<std::string>{kSwapfile});  // zram never counted as enabled
  // Teardown does not swapoff a device that never went on, and resets zram.
  std::vector<hcase::StepRecord> down;
  b.teardown(down);
  EXPECT_EQ(find_step(down, "swapoff /dev/zram0"), nullptr) << dump(down);
  ASSERT_NE(find_step(down, "swapoff " + kSwapfile), nullptr) << dump(down);
  ASSERT_NE(find_step(down, "zram reset"), nullptr) << dump(down);
  EXPECT_EQ(find_step(down, "zram reset")->err, 0);
}

TEST(FaultBackend, TeardownSwapoffFailureIsRecordedWithItsErrnoAndRestorationIsUnclean) {
  for (int err : {ENOMEM, EINTR, EBUSY}) {
    SCOPED_TRACE(err);
    Scratch t;
    FaultScope f;
    f.fail("/dev/zram0", err, FsOp::Swapoff);
    stub_swap(f);
    kernel::Fs fsx(t.root());
    hcase::Backend b(fsx, backend_spec(), hcase::Configuration::BoundedReclaim);
    std::vector<hcase::StepRecord> steps;
    ASSERT_NO_THROW(b.prepare(steps)) << dump(steps);
    std::vector<hcase::StepRecord> down;
    ASSERT_NO_THROW(b.teardown(down));
    const auto* off = find_step(down, "swapoff /dev/zram0");
    ASSERT_NE(off, nullptr) << dump(down);
    EXPECT_EQ(off->err, err);
    // zram still swapped on: it must not be reset under the kernel's feet.
    EXPECT_EQ(find_step(down, "zram reset"), nullptr) << dump(down);
    ASSERT_NE(find_step(down, "swapoff " + kSwapfile), nullptr);
    EXPECT_EQ(find_step(down, "swapoff " + kSwapfile)->err, 0);  // one failure does not stop the rest
    // The restoration verdict over what the host then shows (the capture's /proc/swaps
    // still lists /dev/zram0 with pages in use) is unclean and names the device.
    hcase::RestorationObservation obs;
    obs.swaps = kernel::read_swaps(fsx);
    obs.case_swap_paths = b.enabled_paths();
    auto v = hcase::verify_restoration(obs);
    EXPECT_FALSE(v.clean);
    EXPECT_NE(v.to_json().dump().find("/dev/zram0"), std::string::npos) << v.to_json().dump();
  }
}

// ---------------------------------------------------------------- CaseCgroups ------

hcase::CgroupsSpec cgroups_spec() {
  hcase::CgroupsSpec c;
  c.parent = "harness";
  c.bg_memory_max_bytes = 200ll << 20;
  return c;
}

TEST(FaultCgroups, CreateFailureNamesTheStepAndErrno) {
  Scratch t;
  FaultScope f;
  // The capture already holds harness/{bg,fg} (with their files): mkdir is stubbed, so
  // the writes after it reach real files until the injected ENOMEM on bg memory.max.
  f.fail("sys/fs/cgroup/harness", 0, FsOp::Mkdir)
      .fail("harness/bg", 0, FsOp::Mkdir)
      .fail("harness/fg", 0, FsOp::Mkdir)
      .fail("harness/bg/memory.max", ENOMEM, FsOp::Write);
  hcase::CaseCgroups cg(kernel::Fs(t.root()), cgroups_spec());
  std::vector<hcase::StepRecord> steps;
  try {
    cg.create(steps);
    ADD_FAILURE() << "create succeeded despite ENOMEM";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bg memory.max"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("errno " + std::to_string(ENOMEM)), std::string::npos) << e.what();
  }
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().err, ENOMEM) << dump(steps);
  // The steps before it ran (a write without O_TRUNC over the captured "cpu io memory").
  EXPECT_EQ(t.get("sys/fs/cgroup/harness/cgroup.subtree_control").rfind("+memory", 0), 0u);
}

TEST(FaultCgroups, MkdirEpermStopsAtTheFirstStep) {
  Scratch t;
  fs::remove_all(t.root() / "sys/fs/cgroup/harness");
  FaultScope f;
  f.fail("sys/fs/cgroup/harness", EPERM, FsOp::Mkdir);
  hcase::CaseCgroups cg(kernel::Fs(t.root()), cgroups_spec());
  std::vector<hcase::StepRecord> steps;
  EXPECT_THROW(cg.create(steps), std::runtime_error);
  ASSERT_EQ(steps.size(), 1u) << dump(steps);
  EXPECT_EQ(steps[0].step, "mkdir sys/fs/cgroup/harness");
  EXPECT_EQ(steps[0].err, EPERM);
  EXPECT_TRUE(cg.present().empty());
}

TEST(FaultCgroups, RestorationRmdirEbusyIsRecordedNotThrown) {
  Scratch t;
  FaultScope f;
  f.fail("harness/bg", EBUSY, FsOp::Rmdir).fail("harness/fg", 0, FsOp::Rmdir).fail("sys/fs/cgroup/harness", 0, FsOp::Rmdir);
  hcase::CaseCgroups cg(kernel::Fs(t.root()), cgroups_spec());
  std::vector<hcase::StepRecord> steps;
  ASSERT_NO_THROW(cg.remove(steps));
  const auto* bg = find_step(steps, "rmdir sys/fs/cgroup/harness/bg");
  ASSERT_NE(bg, nullptr) << dump(steps);
  EXPECT_EQ(bg->err, EBUSY);
  EXPECT_EQ(find_step(steps, "rmdir sys/fs/cgroup/harness/fg")->err, 0);
  // Still there: the verdict over it is unclean.
  hcase::RestorationObservation obs;
  obs.cgroups_present = cg.present();
  EXPECT_FALSE(hcase::verify_restoration(obs).clean);
}

TEST(FaultCgroups, KillAllTimesOutOnAPopulatedCgroupAndSaysSo) {
  Scratch t;  // the capture's harness/cgroup.events says "populated 1"
  hcase::CaseCgroups cg(kernel::Fs(t.root()), cgroups_spec());
  auto r = cg.kill_all(200'000'000);
  EXPECT_EQ(r.err, ETIMEDOUT);
  EXPECT_EQ(r.message, "still populated after cgroup.kill");
  EXPECT_EQ(t.get("sys/fs/cgroup/harness/cgroup.kill"), "1");
  // cgroup.kill itself refused (EPERM): recorded, and the wait still bounded.
  FaultScope f;
  f.fail("harness/cgroup.kill", EPERM, FsOp::Write);
  auto r2 = cg.kill_all(100'000'000);
  EXPECT_EQ(r2.err, ETIMEDOUT);
  EXPECT_EQ(kernel::Fs::fault_hits("harness/cgroup.kill"), 1);
}

// ---------------------------------------------------------------- ReclaimAction ----

TEST(FaultReclaim, EagainAndEintrAreRecordedAndTheWriteIsMadeOnce) {
  for (int err : {EAGAIN, EINTR, EBUSY}) {
    SCOPED_TRACE(err);
    Scratch t;
    FaultScope f;
    // times = 1: a retry would go through and write "96M" to the file.
    f.fail("harness/bg/memory.reclaim", err, FsOp::Write, 1);
    kernel::Cgroup bg(kernel::Fs(t.root()), "sys/fs/cgroup/harness/bg");
    hcase::ReclaimAction action(bg, 0);
    action.start(96ll << 20);
    auto rec = action.join();
    ASSERT_TRUE(rec);
    EXPECT_EQ(rec->write_errno, err);
    EXPECT_EQ(rec->requested_bytes, 96ll << 20);
    EXPECT_EQ(kernel::Fs::fault_hits("harness/bg/memory.reclaim"), 1);
    EXPECT_EQ(t.get("sys/fs/cgroup/harness/bg/memory.reclaim"), "") << "the write was retried";
    EXPECT_STREQ(rec->outcome(4096), err == EAGAIN ? "partial" : "error");
    EXPECT_EQ(rec->to_json(4096)["write_errno"], err);
    // Readings around the failed write still taken (from the capture).
    EXPECT_TRUE(rec->pgsteal_before && rec->bg_current_before_bytes && rec->bg_current_after_bytes);
    EXPECT_GE(rec->end_ns, rec->start_ns);
  }
}

TEST(FaultReclaim, UnreadableMemoryStatIsNullNotZero) {
  Scratch t;
  FaultScope f;
  f.fail("harness/bg/memory.stat", EIO, FsOp::Read);
  kernel::Cgroup bg(kernel::Fs(t.root()), "sys/fs/cgroup/harness/bg");
  auto rec = hcase::ReclaimAction::run(bg, 96ll << 20, 0);
  EXPECT_EQ(rec.write_errno, 0);
  EXPECT_FALSE(rec.pgsteal_before);
  EXPECT_FALSE(rec.pgsteal_settled);
  EXPECT_FALSE(rec.achieved_bytes(4096));
}

// ---------------------------------------------------------------- executor ---------

TEST(FaultExecutor, SetupFailureIsInfraFailedBeforeAnyWorkloadOrPressure) {
  Scratch t;
  // A host with no leftovers: no harness cgroup, no swap active.
  fs::remove_all(t.root() / "sys/fs/cgroup/harness");
  t.put("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
  t.put("proc/self/oom_score_adj", "0\n");
  t.put("sys/block/zram0/initstate", "0\n");
  // Workload stand-ins that leave a marker if anything ever starts them.
  const fs::path bin = t.dir() / "bin";
  fs::create_directories(bin);
  for (const char* b : {"pressure-gen", "canary-compute", "canary-sqlite"}) {
    std::ofstream(bin / b) << "#!/bin/sh\ntouch " << (t.dir() / "ran").string() << "\n";
    fs::permissions(bin / b, fs::perms::owner_all);
  }
  std::ofstream(t.dir() / "canary.db") << "x";
  auto j = test_support::valid_spec("fault-setup");
  j["canaries"]["sqlite_db_path"] = (t.dir() / "canary.db").string();
  j["phases_s"] = {{"warmup", 1}, {"pressure", 1}, {"recovery", 1}};
  const auto spec = hcase::parse_spec(j.dump(), "test");

  FaultScope f;
  f.fail("sys/fs/cgroup/harness", EPERM, FsOp::Mkdir);
  stub_swap(f);
  hcase::ExecutorOptions o;
  o.out_dir = (t.dir() / "out").string();
  o.root = t.root().string();
  o.bin_dir = bin.string();
  o.accelerator = "tcg";
  o.skip_qualification = true;
  o.start_lead_ns = 0;
  auto r = hcase::run_case(spec, o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.status, "infra_failed");
  EXPECT_NE(r.error.find("mkdir sys/fs/cgroup/harness"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("errno " + std::to_string(EPERM)), std::string::npos) << r.error;
  EXPECT_EQ(kernel::Fs::fault_hits("sys/fs/cgroup/harness"), 1);
  EXPECT_FALSE(fs::exists(t.dir() / "ran")) << "a workload started after a failed setup";
  ASSERT_FALSE(r.bundle_path.empty());
  results::Db db(r.bundle_path, results::Db::Mode::ReadOnly);
  results::Stmt c(db, "SELECT status, error, outcome_json FROM cases");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.text(0), "infra_failed");
  auto out = nlohmann::json::parse(c.text(2));
  EXPECT_EQ(out["workload_started"], false);
  EXPECT_FALSE(out.contains("argv")) << out.dump();
  ASSERT_TRUE(out["setup_steps"].is_array());
  ASSERT_FALSE(out["setup_steps"].empty());
  EXPECT_EQ(out["setup_steps"].back()["errno"], EPERM) << out["setup_steps"].dump();
  results::Stmt ph(db, "SELECT phase FROM phases ORDER BY start_ns");
  std::vector<std::string> phases;
  while (ph.step()) phases.push_back(ph.text(0));
  EXPECT_EQ(phases, std::vector<std::string>{"restoration"});  // no warmup, no pressure
  results::Stmt rs(db, "SELECT clean FROM restoration");
  ASSERT_TRUE(rs.step()) << "restoration not recorded after a setup failure";
  EXPECT_EQ(rs.int64(0), 1);
  results::Stmt te(db, "SELECT COUNT(*) FROM telemetry");
  ASSERT_TRUE(te.step());
  EXPECT_EQ(te.int64(0), 0);
}
