// Qualification against the real 6.1 guest capture (copied to a scratch dir, because the
// memory.reclaim probe creates and removes a cgroup), the dev host's cgroup-v1 capture and
// the PSI-absent edge case. Host facts that cannot come from a tree (euid, commit) are
// injected through Options.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "harness/kernel/fs.hpp"
#include "harness/kernel/swap.hpp"
#include "qualify/qualify.hpp"

namespace {

const char* kCommit = "0123456789abcdef0123456789abcdef01234567";

std::string fixtures() { return std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures"; }

class Scratch {
 public:
  explicit Scratch(const std::string& src) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hk-qualify-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    dir = tmpl;
    std::filesystem::copy(src, dir, std::filesystem::copy_options::recursive);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::filesystem::path dir;
};

const qualify::Check& find(const qualify::Report& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return c;
  throw std::runtime_error("no check " + name);
}

qualify::Options base(const std::string& root) {
  qualify::Options o;
  o.root = root;
  o.euid = 0;
  o.source_commit = kCommit;
  o.source_dirty = false;
  o.min_free_disk_bytes = 1;
  return o;
}

/// A zero-filled swapfile with a swap signature, as guest init makes it.
void make_swapfile(const std::filesystem::path& root, const std::string& rel) {
  const long page = ::sysconf(_SC_PAGESIZE);
  std::ofstream o(root / rel);
  std::string zeros(static_cast<size_t>(page) * 32, '\0');
  o.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  o.close();
  ASSERT_TRUE(harness::kernel::mkswap(harness::kernel::Fs(root), "/" + rel).ok());
}

}  // namespace

TEST(Qualify, RealGuestCaptureUnderPressure) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  make_swapfile(s.dir, "swapfile");
  auto o = base(s.dir.string());
  o.swapfile_path = "/swapfile";
  auto r = qualify::run(o);

  EXPECT_TRUE(find(r, "root_access").passed);
  EXPECT_TRUE(find(r, "kernel").passed);
  EXPECT_NE(find(r, "kernel").found.find("6.1.0-57-cloud-amd64"), std::string::npos);
  EXPECT_TRUE(find(r, "psi").passed);
  EXPECT_TRUE(find(r, "cgroup2_memory").passed) << find(r, "cgroup2_memory").found;
  EXPECT_TRUE(find(r, "cgroup2_memory_for_children").passed);
  EXPECT_TRUE(find(r, "zram").passed);
  EXPECT_TRUE(find(r, "swapfile").passed) << find(r, "swapfile").fix;
  EXPECT_TRUE(find(r, "free_disk").passed);
  EXPECT_TRUE(find(r, "source_commit").passed);
  EXPECT_TRUE(find(r, "vcpus").passed) << find(r, "vcpus").found;
  EXPECT_TRUE(find(r, "memory").passed) << find(r, "memory").found;  // 972 MiB vs 1024

  // Captured mid-pressure: zram0 holds 103680 KiB of swap.
  const auto& swap = find(r, "clean_swap");
  EXPECT_FALSE(swap.passed);
  EXPECT_NE(swap.found.find("/dev/zram0 103680 KiB"), std::string::npos) << swap.found;
  EXPECT_NE(swap.fix.find("swapoff"), std::string::npos);

  // A copied tree has no kernel memory.reclaim: the probe's write gets ENOENT, and the
  // scratch cgroup is removed again.
  const auto& rec = find(r, "memory_reclaim");
  EXPECT_FALSE(rec.passed);
  EXPECT_NE(rec.found.find("does not exist"), std::string::npos) << rec.found;
  EXPECT_FALSE(std::filesystem::exists(s.dir / "sys/fs/cgroup/harness-qualify-probe"));

  EXPECT_FALSE(r.passed);
  auto reasons = r.reasons();
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[0].rfind("memory_reclaim:", 0), 0u);
  EXPECT_EQ(reasons[1].rfind("clean_swap:", 0), 0u);

  // Recorded without judging.
  EXPECT_EQ(r.recorded["kernel_cmdline"], "console=ttyS0 quiet panic=-1");
  EXPECT_EQ(r.recorded["thp_enabled"], "always");
  EXPECT_EQ(r.recorded["swappiness"], 60);
  EXPECT_EQ(r.recorded["clocksource"], "tsc");
  EXPECT_EQ(r.recorded["mglru_enabled"], "0x0000");
  EXPECT_EQ(r.recorded["zram_algorithms"], nlohmann::json({"lzo", "lzo-rle", "lz4", "lz4hc", "zstd"}));
  EXPECT_EQ(r.recorded["cgroup2_mount"], "/sys/fs/cgroup");
  EXPECT_EQ(r.recorded["zram_devices"].size(), 2u);
  EXPECT_EQ(r.recorded["zram_devices"][1]["initialized"], false);
  EXPECT_EQ(r.recorded["swaps"][0]["used_kib"], 103680);
}

TEST(Qualify, ProbeLeftoverIsCleanedAndDirIsRemoved) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  std::filesystem::create_directory(s.dir / "sys/fs/cgroup/harness-qualify-probe");
  auto r = qualify::run(base(s.dir.string()));
  EXPECT_FALSE(std::filesystem::exists(s.dir / "sys/fs/cgroup/harness-qualify-probe"));
  EXPECT_NE(find(r, "memory_reclaim").found.find("does not exist"), std::string::npos);
}

TEST(Qualify, DevHostMemoryControllerOnCgroupV1) {
  auto o = base(fixtures() + "/host-cgroup-v1-6.18/root");
  auto r = qualify::run(o);
  EXPECT_FALSE(r.passed);
  const auto& mem = find(r, "cgroup2_memory");
  EXPECT_FALSE(mem.passed);
  EXPECT_NE(mem.found.find("memory controller is bound to cgroup v1 (hierarchy 4, mounted at /sys/fs/cgroup/memory)"),
            std::string::npos)
      << mem.found;
  EXPECT_NE(mem.found.find("cgroup2 at /sys/fs/cgroup/unified lacks it"), std::string::npos);
  EXPECT_NE(mem.fix.find("systemd.unified_cgroup_hierarchy=1"), std::string::npos);
  EXPECT_NE(mem.fix.find("harness vm up"), std::string::npos);
  EXPECT_FALSE(find(r, "cgroup2_memory_for_children").passed);
  EXPECT_NE(find(r, "memory_reclaim").found.find("not probed"), std::string::npos);
  EXPECT_TRUE(find(r, "psi").passed);
  EXPECT_TRUE(find(r, "zram").passed);  // zram-control present on the host
  EXPECT_TRUE(find(r, "clean_swap").passed);
  EXPECT_EQ(find(r, "clean_swap").found, "no swap active");
  EXPECT_FALSE(find(r, "swapfile").passed);
  EXPECT_EQ(find(r, "swapfile").found, "no swapfile named");
  EXPECT_FALSE(find(r, "vcpus").passed);
  EXPECT_NE(find(r, "vcpus").found.find("2 online CPU(s)"), std::string::npos);
  EXPECT_NE(find(r, "vcpus").fix.find("-smp"), std::string::npos);
  EXPECT_EQ(r.recorded["cgroup2_mount"], "/sys/fs/cgroup/unified");
  EXPECT_EQ(r.recorded["mglru_enabled"], "absent (no CONFIG_LRU_GEN)");
}

TEST(Qualify, PsiAbsent) {
  auto r = qualify::run(base(fixtures() + "/kernel-edge/psi-absent/root"));
  const auto& psi = find(r, "psi");
  EXPECT_FALSE(psi.passed);
  EXPECT_NE(psi.found.find("No such file"), std::string::npos) << psi.found;
  EXPECT_NE(psi.fix.find("CONFIG_PSI"), std::string::npos);
  EXPECT_FALSE(find(r, "kernel").passed);  // neither osrelease nor version in this tree
  EXPECT_FALSE(r.passed);
}

TEST(Qualify, NotRoot) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  auto o = base(s.dir.string());
  o.euid = 1000;
  auto r = qualify::run(o);
  EXPECT_FALSE(find(r, "root_access").passed);
  EXPECT_EQ(find(r, "root_access").found, "effective uid 1000");
  EXPECT_NE(find(r, "memory_reclaim").found.find("needs root"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(s.dir / "sys/fs/cgroup/harness-qualify-probe"));
}

TEST(Qualify, SourceCommitRules) {
  const std::string root = fixtures() + "/host-cgroup-v1-6.18/root";
  auto o = base(root);
  o.pinned_commit = kCommit;
  EXPECT_TRUE(find(qualify::run(o), "source_commit").passed);
  o.pinned_commit = std::string(kCommit).replace(0, 1, "f");
  auto mismatch = find(qualify::run(o), "source_commit");
  EXPECT_FALSE(mismatch.passed);
  EXPECT_NE(mismatch.found.find("campaign pins f123"), std::string::npos) << mismatch.found;
  EXPECT_NE(mismatch.fix.find("git checkout"), std::string::npos);
  o.pinned_commit = kCommit;
  o.source_dirty = true;
  EXPECT_FALSE(find(qualify::run(o), "source_commit").passed);
  o.pinned_commit = "abc";
  EXPECT_FALSE(find(qualify::run(o), "source_commit").passed);
  EXPECT_TRUE(qualify::valid_pinned_commit("any"));
  EXPECT_TRUE(qualify::valid_pinned_commit(kCommit));
  EXPECT_FALSE(qualify::valid_pinned_commit("ANY"));
  EXPECT_FALSE(qualify::valid_pinned_commit(std::string(kCommit) + "0"));
}

TEST(Qualify, MemoryShapeTolerance) {
  auto o = base(fixtures() + "/host-cgroup-v1-6.18/root");
  auto big = find(qualify::run(o), "memory");
  EXPECT_FALSE(big.passed);  // the dev host has far more than 1 GiB
  EXPECT_NE(big.fix.find("qemu -m 1024"), std::string::npos);
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  auto g = base(s.dir.string());
  g.memory_mib = 2048;  // 972 MiB is not "about 2 GiB"
  EXPECT_FALSE(find(qualify::run(g), "memory").passed);
  g.memory_mib = 1024;
  g.memory_tolerance = 0.02;  // 972 MiB is 5% below 1 GiB
  EXPECT_FALSE(find(qualify::run(g), "memory").passed);
}

TEST(Qualify, SwapfileProblemsSayHowToFix) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  auto o = base(s.dir.string());
  o.swapfile_path = "/swapfile";
  auto missing = find(qualify::run(o), "swapfile");
  EXPECT_FALSE(missing.passed);
  EXPECT_NE(missing.fix.find("dd if=/dev/zero"), std::string::npos);
  // The printed step creates the swapfile's directory first (mkdir -p).
  o.swapfile_path = "/var/lib/harness/swapfile";
  EXPECT_NE(find(qualify::run(o), "swapfile")
                .fix.find("mkdir -p /var/lib/harness && dd if=/dev/zero of=/var/lib/harness/swapfile bs=1M"),
            std::string::npos);
  o.swapfile_path = "/swapfile";
  { std::ofstream(s.dir / "swapfile") << std::string(1 << 20, '\0'); }
  auto nosig = find(qualify::run(o), "swapfile");
  EXPECT_FALSE(nosig.passed);
  EXPECT_NE(nosig.fix.find("mkswap /swapfile"), std::string::npos) << nosig.fix;
}

TEST(Qualify, JsonAndTable) {
  auto r = qualify::run(base(fixtures() + "/host-cgroup-v1-6.18/root"));
  auto j = r.to_json();
  EXPECT_EQ(j["passed"], false);
  ASSERT_TRUE(j["checks"].is_array());
  ASSERT_FALSE(r.checks.empty());  // the loop below says nothing over no checks
  EXPECT_EQ(j["checks"].size(), r.checks.size());
  for (const auto& c : j["checks"]) {
    EXPECT_TRUE(c.contains("name") && c.contains("required") && c.contains("passed") && c.contains("found") &&
                c.contains("fix"));
    if (c["required"] == true && c["passed"] == false) {
      EXPECT_NE(c["fix"], "") << c["name"];
    }
  }
  EXPECT_EQ(j["reasons"].size(), r.reasons().size());
  EXPECT_TRUE(j["recorded"].contains("kernel_cmdline"));
  const std::string t = r.to_table();
  EXPECT_NE(t.find("Qualification: FAILED"), std::string::npos);
  EXPECT_NE(t.find("FAIL    cgroup2_memory"), std::string::npos) << t;
  EXPECT_NE(t.find("fix: boot the host with systemd.unified_cgroup_hierarchy=1"), std::string::npos);
  EXPECT_NE(t.find("Recorded (not judged):"), std::string::npos);
}

// `harness run` compares these `recorded` values across the fleet and checks the commit
// pin against source_commit/source_dirty (harness/campaign/runner/preflight.hpp): the report must
// carry every one of them.
TEST(Qualify, RecordsEveryValueTheFleetPreflightCompares) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  auto o = base(s.dir.string());
  o.source_commit = kCommit;
  o.source_dirty = false;
  const auto j = qualify::run(o).to_json();
  const auto& rec = j.at("recorded");
  EXPECT_EQ(rec.at("kernel_release"), "6.1.0-57-cloud-amd64");
  EXPECT_EQ(rec.at("swappiness"), 60);
  EXPECT_EQ(rec.at("mglru_enabled"), "0x0000");
  EXPECT_EQ(rec.at("thp_enabled"), "always");
  EXPECT_EQ(rec.at("clocksource"), "tsc");
  EXPECT_EQ(rec.at("source_commit"), kCommit);
  EXPECT_EQ(rec.at("source_dirty"), false);
}

// Qualification proves what it checks (a swapfile on tmpfs or copy-on-write btrfs
// passes every static check): a trial swapon/swapoff while swap is clean, through the
// kernel layer's fault seam, so the real syscall is never reached from a fixture tree.
namespace {
qualify::Options clean_swap_host(const Scratch& s) {
  make_swapfile(s.dir, "swapfile");
  std::ofstream(s.dir / "proc/swaps") << "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
  auto o = base(s.dir.string());
  o.swapfile_path = "/swapfile";
  o.trial_swapon_under_root = true;
  return o;
}
}  // namespace

TEST(QualifyTrial, SwapfileTheKernelRefusesFailsWithTheFix) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  const auto o = clean_swap_host(s);
  harness::kernel::FaultScope f;
  f.fail("swapfile", EINVAL, harness::kernel::FsOp::Swapon);
  const auto c = find(qualify::run(o), "swapfile");
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.found.find("trial swapon failed: "), std::string::npos) << c.found;
  EXPECT_NE(c.found.find("Invalid argument"), std::string::npos) << c.found;
  EXPECT_NE(c.fix.find("tmpfs, or copy-on-write btrfs"), std::string::npos) << c.fix;
  EXPECT_NE(c.fix.find("chattr +C"), std::string::npos) << c.fix;
  EXPECT_EQ(harness::kernel::Fs::fault_hits("swapfile"), 1);  // swapoff not attempted after a failed swapon
}

TEST(QualifyTrial, SwapfileThatSwapsOnAndOffPasses) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  const auto o = clean_swap_host(s);
  harness::kernel::FaultScope f;
  f.fail("swapfile", 0, harness::kernel::FsOp::Swapon).fail("swapfile", 0, harness::kernel::FsOp::Swapoff);  // stubbed success
  const auto c = find(qualify::run(o), "swapfile");
  EXPECT_TRUE(c.passed) << c.found << " / " << c.fix;
  EXPECT_NE(c.found.find("trial swapon/swapoff ok"), std::string::npos) << c.found;
  EXPECT_EQ(harness::kernel::Fs::fault_hits("swapfile"), 2);
}

TEST(QualifyTrial, NoTrialWhileSwapIsActiveOrOnAFixtureRoot) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  make_swapfile(s.dir, "swapfile");
  auto o = base(s.dir.string());
  o.swapfile_path = "/swapfile";
  o.trial_swapon_under_root = true;
  harness::kernel::FaultScope f;
  f.fail("swapfile", EINVAL, harness::kernel::FsOp::Swapon);  // would fail the check if the trial ran
  const auto active = find(qualify::run(o), "swapfile");  // the capture has /dev/zram0 active
  EXPECT_TRUE(active.passed) << active.found;
  EXPECT_NE(active.found.find("trial swapon skipped: 1 swap device(s) already active"), std::string::npos)
      << active.found;
  o = clean_swap_host(s);
  o.trial_swapon_under_root = false;  // a fixture root without the test opt-in: never a trial
  const auto fixture = find(qualify::run(o), "swapfile");
  EXPECT_TRUE(fixture.passed);
  EXPECT_EQ(fixture.found.find("trial"), std::string::npos) << fixture.found;
  EXPECT_EQ(harness::kernel::Fs::fault_hits("swapfile"), 0);
}

TEST(QualifyTrial, CampaignCompressorIsChecked) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  auto o = base(s.dir.string());
  o.zram_algorithm = "lzo-rle";
  const auto ok = find(qualify::run(o), "zram_algorithm");
  EXPECT_TRUE(ok.passed) << ok.found;
  EXPECT_EQ(ok.found, "lzo-rle available (/sys/block/zram0/comp_algorithm)");
  o.zram_algorithm = "842";
  const auto r = qualify::run(o);
  const auto& missing = find(r, "zram_algorithm");
  EXPECT_FALSE(missing.passed);
  EXPECT_EQ(missing.found,
            "842 not found in zram comp_algorithm (lzo, lzo-rle, lz4, lz4hc, zstd), /proc/crypto or the kernel's modules");
  EXPECT_EQ(missing.fix, "load the compressor (modprobe 842, or insmod its module from lib/modules) or choose one of: "
                         "lzo, lzo-rle, lz4, lz4hc, zstd");
  EXPECT_FALSE(r.passed);
  o.zram_algorithm.clear();  // not asked: no check at all
  for (const auto& c : qualify::run(o).checks) EXPECT_NE(c.name, "zram_algorithm");
}

// Device ownership: zram devices the harness did not create are reported and left
// alone; an active device of the harness is a leftover, not clean whatever its used
// column says; a foreign active device must sit below the case's priorities.
namespace {
void put(const Scratch& s, const std::string& rel, const std::string& text) {
  std::filesystem::create_directories((s.dir / rel).parent_path());
  std::ofstream(s.dir / rel) << text;
}
const char* kSwapsHeader = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
}  // namespace

TEST(QualifyOwnership, ForeignZramIsReportedWithItsSwapState) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  const auto r = qualify::run(base(s.dir.string()));
  const auto& f = find(r, "foreign_zram");
  EXPECT_FALSE(f.required);
  EXPECT_FALSE(f.passed);  // a foreign device in use as swap is worth a look
  EXPECT_NE(f.found.find("/dev/zram0 (active swap, priority -2, 103680 KiB used)"), std::string::npos) << f.found;
  EXPECT_NE(f.found.find("/dev/zram1 (unconfigured)"), std::string::npos) << f.found;
  EXPECT_EQ(r.recorded["zram_devices"][0]["owner"], "foreign");
  EXPECT_EQ(r.recorded["zram_devices"][0]["swap_active"], true);
  EXPECT_EQ(r.recorded["zram_devices"][0]["swap_used_kib"], 103680);
  EXPECT_EQ(r.recorded["zram_devices"][1]["swap_active"], false);
  // Once the harness owns zram1 (marker of this boot), only zram0 is foreign.
  put(s, "proc/sys/kernel/random/boot_id", "qualify-boot\n");
  put(s, "run/reclaim-harness/zram-device", "id 1\nboot_id qualify-boot\nhow hot_add\n");
  const auto r2 = qualify::run(base(s.dir.string()));
  EXPECT_EQ(find(r2, "foreign_zram").found.find("zram1"), std::string::npos) << find(r2, "foreign_zram").found;
  EXPECT_EQ(r2.recorded["zram_devices"][1]["owner"], "harness");
  EXPECT_NE(find(r2, "zram").found.find("the harness owns zram1 (hot_add)"), std::string::npos);
}

TEST(QualifyOwnership, ForeignActiveSwapBelowTheCasePrioritiesIsClean) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  put(s, "proc/swaps", std::string(kSwapsHeader) + "/dev/zram0 partition 65532 0 -2\n");
  auto o = base(s.dir.string());
  o.case_min_swap_priority = 10;
  auto c = find(qualify::run(o), "clean_swap");
  EXPECT_TRUE(c.passed) << c.found;
  EXPECT_NE(c.found.find("all below the case's priority 10"), std::string::npos) << c.found;
  put(s, "proc/swaps", std::string(kSwapsHeader) + "/dev/zram0 partition 65532 0 100\n");
  c = find(qualify::run(o), "clean_swap");
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.found.find("not below the case's 10"), std::string::npos) << c.found;
  EXPECT_NE(c.fix.find("swapon -p -1 /dev/zram0"), std::string::npos) << c.fix;
}

TEST(QualifyOwnership, ActiveDeviceOfTheHarnessIsNotCleanEvenWithNothingUsed) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  make_swapfile(s.dir, "swapfile");
  put(s, "proc/sys/kernel/random/boot_id", "qualify-boot\n");
  put(s, "run/reclaim-harness/zram-device", "id 1\nboot_id qualify-boot\nhow hot_add\n");
  // zram1 of the harness active with 0 used (e.g. after an OOM kill emptied it).
  put(s, "proc/swaps", std::string(kSwapsHeader) + "/dev/zram1 partition 524284 0 100\n");
  auto o = base(s.dir.string());
  o.swapfile_path = "/swapfile";
  auto c = find(qualify::run(o), "clean_swap");
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.found.find("/dev/zram1 of the harness still active (0 KiB used): a leftover of an earlier case"),
            std::string::npos)
      << c.found;
  EXPECT_NE(c.fix.find("swapoff /dev/zram1 (ENOMEM means a process holds swapped memory"), std::string::npos) << c.fix;
  // The campaign's swapfile active with nothing used: the same.
  put(s, "proc/swaps", std::string(kSwapsHeader) + "/swapfile file 65532 0 -2\n");
  c = find(qualify::run(o), "clean_swap");
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.found.find("/swapfile of the harness still active"), std::string::npos) << c.found;
}

// No unquoted input: every command a fix line invites the user to paste quotes its
// arguments (harness::text::shell_quote).
TEST(QualifyOwnership, FixLinesQuoteTheirArguments) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  const std::string evil = "/swap file; rm -rf x";
  put(s, "proc/swaps", std::string(kSwapsHeader) + "/swap\\040file;\\040rm\\040-rf\\040x file 65532 0 -2\n");
  auto o = base(s.dir.string());
  o.swapfile_path = evil;
  const auto r = qualify::run(o);
  const auto& clean = find(r, "clean_swap");
  EXPECT_FALSE(clean.passed);
  EXPECT_NE(clean.fix.find("swapoff '/swap file; rm -rf x' (ENOMEM"), std::string::npos) << clean.fix;
  const auto& sw = find(r, "swapfile");  // missing file: the creation commands
  EXPECT_FALSE(sw.passed);
  EXPECT_NE(sw.fix.find("of='/swap file; rm -rf x' bs=1M"), std::string::npos) << sw.fix;
  EXPECT_NE(sw.fix.find("chmod 600 '/swap file; rm -rf x'"), std::string::npos) << sw.fix;
  EXPECT_EQ(sw.fix.find("of=/swap file"), std::string::npos) << sw.fix;
  // A compressor name is quoted too (it reaches `modprobe`).
  o.zram_algorithm = "lz4;reboot";
  const auto rep = qualify::run(o);  // the check refers into the report: keep it alive
  const auto& alg = find(rep, "zram_algorithm");
  EXPECT_NE(alg.fix.find("modprobe 'lz4;reboot'"), std::string::npos) << alg.fix;
}

// A feature the experiment needs, compiled out or switched off at boot: the kernel config
// (boot/config-<release>, written by the test into a copy of the 6.1 guest capture) and
// /proc/cmdline tell them apart, and the fix names the boot parameter when the kernel has it.
namespace {
const char* kRelease = "6.1.0-57-cloud-amd64";
void put_config(const Scratch& s, const std::string& lines) { put(s, std::string("boot/config-") + kRelease, lines); }
void no_psi(const Scratch& s) { std::filesystem::remove_all(s.dir / "proc/pressure"); }
}  // namespace

TEST(QualifyBootSwitches, PsiOffAtBootOnAKernelWithPsiNamesPsi1) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  no_psi(s);
  put_config(s, "CONFIG_PSI=y\n# CONFIG_PSI_DEFAULT_DISABLED is not set\nCONFIG_MEMCG=y\nCONFIG_ZRAM=m\n");
  put(s, "proc/cmdline", "console=ttyS0 quiet panic=-1 psi=0\n");
  const auto r = qualify::run(base(s.dir.string()));
  const auto& psi = find(r, "psi");
  EXPECT_FALSE(psi.passed);
  EXPECT_NE(psi.found.find("PSI is disabled at boot (psi=0 on the kernel command line); the kernel has CONFIG_PSI=y"),
            std::string::npos) << psi.found;
  EXPECT_EQ(psi.fix, "boot with psi=1 (remove psi=0 from the kernel command line)");
  EXPECT_EQ(r.recorded["kernel_config"]["CONFIG_PSI"], "y");
}

TEST(QualifyBootSwitches, PsiCompiledOutNamesTheKernelBuild) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  no_psi(s);
  put_config(s, "# CONFIG_PSI is not set\nCONFIG_MEMCG=y\n");
  put(s, "proc/cmdline", "console=ttyS0 psi=0\n");  // psi=0 too: the config decides
  const auto rep_psi = qualify::run(base(s.dir.string()));
  const auto& psi = find(rep_psi, "psi");
  EXPECT_FALSE(psi.passed);
  EXPECT_NE(psi.found.find("the kernel is built without PSI (CONFIG_PSI n in /boot/config-6.1.0-57-cloud-amd64)"),
            std::string::npos) << psi.found;
  EXPECT_EQ(psi.fix, "use a kernel built with CONFIG_PSI=y (Debian cloud kernels have it)");
}

TEST(QualifyBootSwitches, PsiOffByDefaultAndPsiOffWithoutAConfig) {
  {
    Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
    no_psi(s);
    put_config(s, "CONFIG_PSI=y\nCONFIG_PSI_DEFAULT_DISABLED=y\n");
    const auto rep_psi = qualify::run(base(s.dir.string()));
    const auto& psi = find(rep_psi, "psi");
    EXPECT_NE(psi.found.find("off by default (CONFIG_PSI_DEFAULT_DISABLED=y)"), std::string::npos) << psi.found;
    EXPECT_EQ(psi.fix, "boot with psi=1");
  }
  {
    Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");  // no boot/config-*: the command line still tells
    no_psi(s);
    put(s, "proc/cmdline", "console=ttyS0 psi=off\n");
    const auto rep_psi = qualify::run(base(s.dir.string()));
    const auto& psi = find(rep_psi, "psi");
    EXPECT_EQ(psi.fix, "boot with psi=1 (remove psi=off from the kernel command line)");
  }
  {
    Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");  // neither: both remedies, conditionally
    no_psi(s);
    const auto rep_psi = qualify::run(base(s.dir.string()));
    const auto& psi = find(rep_psi, "psi");
    EXPECT_NE(psi.fix.find("if the kernel is built with CONFIG_PSI=y, boot with psi=1; otherwise use a kernel built "
                           "with CONFIG_PSI=y"),
              std::string::npos) << psi.fix;
  }
}

TEST(QualifyBootSwitches, ZswapEnabledFailsNamingZswapEnabled0) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  {  // the capture has no /sys/module/zswap: not in the kernel, passes
    const auto r = qualify::run(base(s.dir.string()));
    EXPECT_TRUE(find(r, "zswap").passed);
    EXPECT_EQ(r.recorded["zswap_enabled"], "absent");
  }
  put(s, "sys/module/zswap/parameters/enabled", "N\n");
  {
    const auto r = qualify::run(base(s.dir.string()));
    EXPECT_TRUE(find(r, "zswap").passed) << find(r, "zswap").found;
    EXPECT_EQ(r.recorded["zswap_enabled"], "N");
  }
  put(s, "sys/module/zswap/parameters/enabled", "Y\n");
  put(s, "proc/cmdline", "console=ttyS0 zswap.enabled=1\n");
  const auto r = qualify::run(base(s.dir.string()));
  const auto& z = find(r, "zswap");
  EXPECT_FALSE(z.passed);
  EXPECT_TRUE(z.required);
  EXPECT_NE(z.found.find("zswap enabled (/sys/module/zswap/parameters/enabled = Y); zswap.enabled=1 on the kernel "
                         "command line"),
            std::string::npos) << z.found;
  EXPECT_EQ(z.fix.rfind("boot with zswap.enabled=0 (instead of zswap.enabled=1)", 0), 0u) << z.fix;
  EXPECT_EQ(r.recorded["zswap_enabled"], "Y");
  bool listed = false;
  for (const auto& reason : r.reasons()) listed = listed || reason.rfind("zswap:", 0) == 0;
  EXPECT_TRUE(listed);
}

TEST(QualifyBootSwitches, MemcgAndZramCompiledOutVersusSwitchedOff) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  // No memory controller anywhere (/proc/cgroups without it, cgroup2 root without it).
  std::string cg;
  {
    std::ifstream in(s.dir / "proc/cgroups");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("memory", 0) != 0) cg += line + "\n";
  }
  put(s, "proc/cgroups", cg);
  put(s, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io pids\n");
  put_config(s, "CONFIG_PSI=y\n# CONFIG_MEMCG is not set\n# CONFIG_ZRAM is not set\n");
  std::filesystem::remove_all(s.dir / "sys/block/zram0");
  std::filesystem::remove_all(s.dir / "sys/block/zram1");
  std::filesystem::remove_all(s.dir / "sys/class/zram-control");
  auto r = qualify::run(base(s.dir.string()));
  EXPECT_EQ(find(r, "cgroup2_memory").fix,
            "use a kernel built with CONFIG_MEMCG=y (CONFIG_MEMCG n in /boot/config-6.1.0-57-cloud-amd64)");
  EXPECT_EQ(find(r, "zram").fix,
            "use a kernel built with CONFIG_ZRAM=y or m (CONFIG_ZRAM n in /boot/config-6.1.0-57-cloud-amd64)");
  // The same kernel built with both, memcg disabled at boot, zram a module not loaded.
  put_config(s, "CONFIG_PSI=y\nCONFIG_MEMCG=y\nCONFIG_ZRAM=m\n");
  put(s, "proc/cmdline", "console=ttyS0 cgroup_disable=memory\n");
  r = qualify::run(base(s.dir.string()));
  EXPECT_EQ(find(r, "cgroup2_memory").fix,
            "remove cgroup_disable=memory from the kernel command line (the kernel has CONFIG_MEMCG=y)");
  EXPECT_NE(find(r, "zram").fix.find("load zram: modprobe zram"), std::string::npos) << find(r, "zram").fix;
}

TEST(QualifyBootSwitches, CompressorsAndTheirConfigItemsAreRecorded) {
  Scratch s(fixtures() + "/6.1.0-57-cloud-amd64/root");
  put_config(s, "CONFIG_PSI=y\nCONFIG_CRYPTO_LZO=y\n# CONFIG_CRYPTO_842 is not set\nCONFIG_ZSWAP=y\n");
  auto o = base(s.dir.string());
  auto r = qualify::run(o);
  EXPECT_EQ(r.recorded["compressors"]["lzo-rle"], "/sys/block/zram0/comp_algorithm");
  EXPECT_EQ(r.recorded["compressors"]["zstd"], "/sys/block/zram0/comp_algorithm");
  EXPECT_TRUE(r.recorded["compressors"]["842"].is_null());
  EXPECT_EQ(r.recorded["kernel_config"]["CONFIG_CRYPTO_LZO"], "y");
  EXPECT_EQ(r.recorded["kernel_config"]["CONFIG_CRYPTO_842"], "n");
  EXPECT_TRUE(r.recorded["kernel_config"]["CONFIG_CRYPTO_ZSTD"].is_null());  // not mentioned
  EXPECT_EQ(r.recorded["kernel_config"]["CONFIG_ZSWAP"], "y");
  EXPECT_EQ(qualify::compressor_config_item("lzo-rle"), "CONFIG_CRYPTO_LZO");
  EXPECT_EQ(qualify::compressor_config_item("nope"), "");
  // The campaign's compressor compiled out: the fix names the config item, not modprobe.
  o.zram_algorithm = "842";
  const auto rep_alg = qualify::run(o);
  const auto& alg = find(rep_alg, "zram_algorithm");
  EXPECT_FALSE(alg.passed);
  EXPECT_EQ(alg.fix.rfind("the kernel is built without 842 (CONFIG_CRYPTO_842 n in /boot/config-6.1.0-57-cloud-amd64)", 0),
            0u) << alg.fix;
}
