// The libvirt engine with a real libvirtd (started by libvirt_lab.sh, no systemd): the
// harness image boots as a domain from the engine's XML under the accelerator this machine
// really gives a guest, as the product decides it for local guests (harness/vm/accel.hpp):
// kvm where KVM runs the image's kernel; TCG otherwise, for the reason the machine gives
// (with no /dev/kvm, libvirt's domain capabilities offer no kvm domain; with a broken one,
// they offer kvm and the engine's trial domain, or the host's obstacle, says no), and each
// guest's agent answers from this process through the engine's way in:
// vm0 over qemu:///system (hypervisor loopback forward), vm1 over a real remote transport,
// qemu+ssh to this machine's sshd (libvirt over ssh, agent through an ssh tunnel). Then a
// fresh boot with a variant cmdline, a runner "kill" and adoption, and release: nothing of
// the campaign is left defined or running. Prints boot-to-ready per boot.
#include "harness/pool/host_identity.hpp"
#include "harness/pool/libvirt/libvirt_pool.hpp"

#include "harness/pool/libvirt/tunnel.hpp"
#include "harness/pool/libvirt/virt.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/image.hpp"
#include "harness/vm/qemu.hpp"
#include "harness/vm/paths.hpp"
#include "tests/common/guest_exec.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

namespace fs = std::filesystem;
using namespace harness::pool;
using namespace harness::pool::libvirt;

namespace {

const std::string kLab = std::string(HARNESS_SOURCE_DIR) + "/tests/vm/pool_libvirt/libvirt_lab.sh";
const std::string kPrefix = "rhtest-";

std::map<std::string, std::string> read_env(const fs::path& f) {
  std::map<std::string, std::string> m;
  std::ifstream in(f);
  std::string line;
  while (std::getline(in, line))
    if (const auto eq = line.find('='); eq != std::string::npos) m[line.substr(0, eq)] = line.substr(eq + 1);
  return m;
}

/// An agent's answer to one GET: status (-1 when none came) and body.
struct Answer {
  int status = -1;
  std::string body;
};

Answer answer_of(const Guest& g, const std::string& path, bool with_token) {
  httplib::Client cli(g.url);
  cli.set_connection_timeout(5, 0);
  cli.set_read_timeout(10, 0);
  httplib::Headers h;
  if (with_token) {
    std::string t = harness::vm::read_file(g.token_file);
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    h.emplace("Authorization", "Bearer " + t);
  }
  auto r = cli.Get(path, h);
  return r ? Answer{r->status, r->body} : Answer{};
}

int status_of(const Guest& g, const std::string& path, bool with_token) { return answer_of(g, path, with_token).status; }

std::vector<std::string> harness_domains(const std::string& uri) {
  Conn c = open_connection(uri);
  virDomainPtr* doms = nullptr;
  const int n = virConnectListAllDomains(c.get(), &doms, 0);  // defined or running
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    const std::string name = virDomainGetName(doms[i]);
    if (name.rfind(kPrefix, 0) == 0) out.push_back(name);
    virDomainFree(doms[i]);
  }
  std::free(doms);
  return out;
}

/// Volumes of the test's storage pool that are not image volumes (rh-...).
std::vector<std::string> guest_volumes(const std::string& uri, const std::string& pool_name) {
  Conn c = open_connection(uri);
  StoragePool p(virStoragePoolLookupByName(c.get(), pool_name.c_str()));
  std::vector<std::string> out;
  if (!p) return out;
  virStoragePoolRefresh(p.get(), 0);
  virStorageVolPtr* vols = nullptr;
  const int n = virStoragePoolListAllVolumes(p.get(), &vols, 0);
  for (int i = 0; i < n; ++i) {
    const std::string name = virStorageVolGetName(vols[i]);
    if (name.rfind("rh-", 0) != 0) out.push_back(name);
    virStorageVolFree(vols[i]);
  }
  std::free(vols);
  return out;
}

class LibvirtGuest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("libvirt-vm-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
    const char* cache_env = std::getenv("HARNESS_VM_CASE_CACHE");
    const std::string cache = cache_env ? cache_env : std::string(HARNESS_BINARY_DIR) + "/case-vm-cache";
    image_dir_ = cache + "/image";
    ASSERT_EQ(test_support::sh(harness + " vm --cache " + cache + " image --accel tcg > " + (dir_ / "image.log").string() + " 2>&1"), 0)
        << test_support::slurp(dir_ / "image.log");
    ASSERT_EQ(test_support::sh("bash " + kLab + " start " + (dir_ / "lab").string() + " > " + (dir_ / "lab.log").string() + " 2>&1"), 0)
        << test_support::slurp(dir_ / "lab.log");
    lab_ = read_env(dir_ / "lab" / "lab.env");
    ASSERT_FALSE(lab_["LAB_SSH_URI"].empty());
    cfg_.hosts.push_back({parse_uri(lab_["LAB_SYSTEM_URI"]), 1});
    cfg_.hosts.push_back({parse_uri(lab_["LAB_SSH_URI"]), 1});
    cfg_.name_prefix = kPrefix;
    cfg_.storage_pool = "reclaim-harness-test";
    cfg_.storage_path = "/var/lib/libvirt/reclaim-harness-test";
    cfg_.cache_dir = (dir_ / "cache").string();
    cfg_.boot_timeout_s = 240;
    hooks_.default_image_dir = image_dir_;
    ctx_.campaign = "libvirt-vm-test";
    ctx_.db_path = (dir_ / "campaign.db").string();
    ctx_.accelerator = "auto";
  }
  void TearDown() override {
    try {
      libvirt_down(cfg_, ctx_.campaign, "", true, stderr);  // whatever a failed assertion left, images included
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cleanup: %s\n", e.what());
    }
    try {  // the test's storage pool (created by the engine) goes too
      Conn c = open_connection("qemu:///system");
      if (StoragePool p{virStoragePoolLookupByName(c.get(), cfg_.storage_pool.c_str())}) {
        virStoragePoolDestroy(p.get());
        virStoragePoolDelete(p.get(), 0);
        virStoragePoolUndefine(p.get());
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cleanup: %s\n", e.what());
    }
    test_support::sh("bash " + kLab + " stop " + (dir_ / "lab").string());
    if (!HasFailure()) fs::remove_all(dir_);
  }
  fs::path dir_;
  std::string image_dir_;
  std::map<std::string, std::string> lab_;
  LibvirtConfig cfg_;
  PoolHooks hooks_;
  AcquireContext ctx_;
};

}  // namespace

TEST_F(LibvirtGuest, BootsOverSystemAndSshAndLeavesNothing) {
  // First (before this process has libvirt connections or threads, as it forks): an agent
  // tunnel ends with its runner, even when the runner is killed with SIGKILL.
  {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(fds[0]);
      int pid = -1;
      try {
        SshTunnel t(parse_uri(lab_["LAB_SSH_URI"]), harness::vm::free_local_port(), std::stoi(lab_["LAB_SSH_PORT"]),
                    (dir_ / "tunnel-kill.log").string());
        pid = t.pid();
        (void)!::write(fds[1], &pid, sizeof pid);
        ::pause();
      } catch (...) {
        // no tunnel: pid stays -1, written below, and the parent's ASSERT_GT fails with the log
      }
      (void)!::write(fds[1], &pid, sizeof pid);
      ::_exit(1);
    }
    ::close(fds[1]);
    int ssh_pid = -1;
    ASSERT_EQ(::read(fds[0], &ssh_pid, sizeof ssh_pid), static_cast<ssize_t>(sizeof ssh_pid));
    ::close(fds[0]);
    ASSERT_GT(ssh_pid, 0) << test_support::slurp(dir_ / "tunnel-kill.log");
    auto ssh_alive = [ssh_pid] {
      const std::string st = test_support::slurp("/proc/" + std::to_string(ssh_pid) + "/stat");
      const auto rp = st.rfind(')');
      return rp != std::string::npos && rp + 2 < st.size() && st[rp + 2] != 'Z';
    };
    EXPECT_TRUE(ssh_alive());
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    const auto t0 = std::chrono::steady_clock::now();
    while (ssh_alive() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30))
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(ssh_alive()) << "ssh tunnel " << ssh_pid << " outlived its killed runner";
  }

  // The machine's real accelerator, by the product's decision for local guests over the same
  // kernel (auto: the host's obstacles, else a trial boot; cached per host boot). The engine
  // decides on its own way (domain capabilities, obstacles, a trial domain) and must agree.
  harness::vm::AccelRequest probe;
  probe.requested = "auto";
  probe.vmlinuz = harness::vm::load_image_dir(image_dir_).vmlinuz;
  const harness::vm::AccelChoice machine = harness::vm::choose_accelerator(probe);
  std::printf("this machine: %s\n", machine.message().c_str());
  const std::string expected = machine.accelerator;
  // The engine's reason, known from the machine before the boot (header comment).
  const std::string expected_reason = expected == "kvm"          ? "kvm trial domain printed the kernel banner"
                                      : fs::exists("/dev/kvm") ? "offers kvm but"
                                                               : "offers no kvm domain";
  auto pool = std::make_unique<LibvirtPool>(cfg_, GuestShape{}, hooks_);
  const auto instances = pool->acquire(ctx_);
  const auto guests = addresses(instances);
  ASSERT_EQ(guests.size(), 2u);
  EXPECT_EQ(guests[0].host, "qemu:///system");
  // the host's identity (harness/pool/host_identity.hpp): the lab URI without its keyfile= and command=
  EXPECT_EQ(guests[1].host, harness::pool::host_identity(lab_["LAB_SSH_URI"]));
  EXPECT_EQ(guests[1].host.find("keyfile="), std::string::npos) << guests[1].host;
  for (const auto& g : guests) {
    const auto b = pool->last_boot(g.name);
    ASSERT_TRUE(b) << g.name;
    std::printf("libvirt boot-to-ready %s (%s, %s): %.1f s\n", g.name.c_str(), g.host.c_str(), b->accelerator.c_str(),
                b->boot_to_ready_s);
    std::printf("  accelerator reason: %s\n", b->accelerator_reason.c_str());
    if (!b->note.empty()) std::printf("  note: %s\n", b->note.c_str());
    // LIBVIRT_LAB_KVM=as-found (libvirt_lab.sh) leaves a /dev/kvm closed to libvirt's qemu user
    // as it is: every start then probes qemu again, and the engine must say so and why.
    if (const char* k = std::getenv("LIBVIRT_LAB_KVM"); k && std::string(k) == "as-found" && !check_kvm_permission("/"))
      EXPECT_NE(b->note.find("cannot open it, so libvirt drops its cached qemu capabilities"), std::string::npos)
          << g.name << ": " << b->note;
    EXPECT_EQ(g.accelerator, expected) << machine.reason;
    EXPECT_EQ(b->accelerator, expected);
    EXPECT_NE(b->accelerator_reason.find(expected_reason), std::string::npos)
        << (fs::exists("/dev/kvm") ? "/dev/kvm present" : "no /dev/kvm") << ": " << b->accelerator_reason;
    // the agent, through the engine's forward (and, for vm1, the ssh tunnel)
    EXPECT_EQ(status_of(g, "/v1/health", false), 200) << g.name;
    // the token in the disk's slot is the one on file here: accepted; none: 401. With it, a
    // well-formed id no case has is 404 naming the id (API.md: ids match [A-Za-z0-9._-]{1,128};
    // 400 is for an id outside that), not the 404 of an unknown path.
    EXPECT_EQ(status_of(g, "/v1/cases/no-such-case", false), 401) << g.name;
    const Answer with = answer_of(g, "/v1/cases/no-such-case", true);
    EXPECT_EQ(with.status, 404) << g.name << ": " << with.body;
    EXPECT_NE(with.body.find("unknown case id no-such-case"), std::string::npos) << g.name << ": " << with.body;
    const std::string x = pool->live_domain_xml(g.name);
    EXPECT_NE(x.find("<vcpu placement='static'>1</vcpu>"), std::string::npos);
    EXPECT_NE(x.find("<memory unit='KiB'>1048576</memory>"), std::string::npos);
    EXPECT_NE(x.find("<memballoon model='none'/>"), std::string::npos);
    EXPECT_NE(x.find(expected == "kvm" ? "<domain type='kvm'" : "<domain type='qemu'"), std::string::npos) << x;
    EXPECT_NE(x.find(" harness.accelerator=" + expected + " "), std::string::npos) << x;
  }
  // Each boot's data disk is a sparse copy made on the hypervisor (4 GiB, mostly holes).
  {
    Conn c = open_connection("qemu:///system");
    StoragePool p(virStoragePoolLookupByName(c.get(), cfg_.storage_pool.c_str()));
    ASSERT_TRUE(p);
    for (const auto& g : guests) {
      Volume v(virStorageVolLookupByName(p.get(), (kPrefix + g.name + "-disk.img").c_str()));
      ASSERT_TRUE(v) << g.name;
      virStorageVolInfo info{};
      ASSERT_EQ(virStorageVolGetInfo(v.get(), &info), 0);
      std::printf("%s data disk: capacity %llu MiB, allocated %llu MiB\n", g.name.c_str(), info.capacity >> 20,
                  info.allocation >> 20);
      EXPECT_LT(info.allocation, info.capacity / 2) << g.name;
    }
  }
  // Capacity of the one machine behind both URIs (read before the next boot).
  for (const auto& c : pool->capacity())
    std::printf("capacity %s: %d cores, %lld MiB, guests %zu\n", c.host.c_str(), c.cores,
                static_cast<long long>(c.memory_mib), c.guests.size());

  // A fresh boot of the ssh guest with a variant cmdline, console and XML kept with the attempt.
  BootRequest r;
  r.cmdline = {"harness.test_marker=libvirt"};
  r.log_dir = (dir_ / "attempt").string();
  const auto t0 = std::chrono::steady_clock::now();
  const BootResult fb = instances[1]->fresh_boot(r);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("libvirt fresh boot vm1 (ssh): boot-to-ready %.1f s, fresh_boot() wall %.1f s (destroy, disk copy, token)\n",
              fb.boot_to_ready_s, wall);
  if (!fb.note.empty()) std::printf("  note: %s\n", fb.note.c_str());
  EXPECT_EQ(status_of(guests[1], "/v1/health", false), 200);
  const std::string console = instances[1]->diagnose(1 << 20);
  EXPECT_NE(console.find("harness.test_marker=libvirt"), std::string::npos) << console;
  EXPECT_NE(console.find("harness-init: starting agent"), std::string::npos) << console;
  EXPECT_NE(test_support::slurp(fs::path(r.log_dir) / "console.log").find("harness.test_marker=libvirt"), std::string::npos);
  EXPECT_NE(test_support::slurp(fs::path(r.log_dir) / "domain.xml").find("<memballoon model='none'/>"), std::string::npos);
  EXPECT_EQ(instances[1]->liveness(), Liveness::Running);

  // "kill -9" of the runner: the pool goes without release; the next one adopts both.
  pool.reset();
  EXPECT_EQ(harness_domains("qemu:///system").size(), 2u);
  auto next = std::make_unique<LibvirtPool>(cfg_, GuestShape{}, hooks_);
  const auto adopted = addresses(next->acquire(ctx_));
  for (const auto& g : adopted) {
    EXPECT_FALSE(next->last_boot(g.name)) << g.name << " was booted again, not adopted";
    EXPECT_EQ(status_of(g, "/v1/health", false), 200) << g.name;
  }
  EXPECT_TRUE(next->uploads().empty());
  next->release();
  EXPECT_TRUE(harness_domains("qemu:///system").empty());
  EXPECT_TRUE(harness_domains(lab_["LAB_SSH_URI"]).empty());
  EXPECT_EQ(guest_volumes("qemu:///system", cfg_.storage_pool), std::vector<std::string>{});
}
