// The runner through the pool boundary alone (harness/pool/pool.hpp), with an engine this
// test registers (kind test-pool) whose guests are fake agents on 127.0.0.1: a BootError is
// an infra failure before the case with the console tail in the attempt (never a lost case,
// the case never submitted); capacity is refused before anything is stored or booted, or
// with provider.overcommit recorded per case (cases.overcommitted, the report's warning);
// every case records its host (cases.host_uri); capabilities decide fresh boots; a vanished
// case records the engine's evidence; release at the end, release_orphans when nothing is
// left. And the CLI: `harness plan` refuses a local-qemu campaign that does not fit this
// machine (exit 2, nothing stored) and prints the wall-time estimate; `harness vm up` applies
// the same check.
#include "analysis/tables/environment_table.hpp"
#include "harness/campaign/check/ab_environment.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/runner/runner.hpp"
#include "harness/campaign/plan/wall_time.hpp"
#include "harness/pool/engine.hpp"
#include "harness/pool/host_costs.hpp"
#include "harness/pool/local_guest/local_host.hpp"

#include "tests/common/fake_agent.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <atomic>
#include <mutex>
#include <thread>

#include "test_files.hpp"
#include "tests/common/run_harness.hpp"
#include "tests/common/small_campaign.hpp"
#include "tests/common/wait_until.hpp"

namespace hc = harness::campaign;
namespace hp = harness::pool;
using testfiles::TempDir;
using testfiles::write;
using testfiles::write_token;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// What the test engine does; set by each test before run_campaign (one test at a time).
struct TestPoolState {
  std::mutex mu;
  std::map<std::string, std::pair<std::string, std::string>> agents;  // vm -> (url, token file)
  std::map<std::string, fake::FakeAgent*> fakes;  // vm -> its fake agent: a fresh boot replaces its guest
  int cores = 64;
  std::int64_t memory_mib = 1 << 20;
  std::string unreachable;            // capacity() lists the host as not answering (this text)
  int boot_failures_left = 0;         // the next N fresh boots throw BootError
  std::vector<std::string> boots;     // guest names, in fresh-boot order
  int acquires = 0, releases = 0, orphan_releases = 0;
  int instance_releases = 0;          // Instance::release() calls (the runner releases through the pool)
  hp::Liveness liveness = hp::Liveness::Gone;  // what liveness() answers
  std::atomic<int> liveness_calls{0};
  void reset() {
    std::lock_guard<std::mutex> lk(mu);
    agents.clear();
    fakes.clear();
    cores = 64;
    memory_mib = 1 << 20;
    unreachable.clear();
    boot_failures_left = 0;
    boots.clear();
    acquires = releases = orphan_releases = instance_releases = 0;
    liveness = hp::Liveness::Gone;
    liveness_calls = 0;
  }
};
TestPoolState& state() {
  static TestPoolState s;
  return s;
}

struct TestConfig : hp::EngineConfig {
  nlohmann::json settings() const override { return {{"vms", vms}, {"fresh_guest_per_case", fresh_guest_per_case}}; }
  std::shared_ptr<hp::EngineConfig> clone() const override { return std::make_shared<TestConfig>(*this); }
};

/// A guest of TestPool: its operations record themselves in state().
class TestGuest : public hp::Instance {
 public:
  TestGuest(hp::Guest g, bool fresh) : hp::Instance(std::move(g), fresh) {}
  hp::BootResult fresh_boot(const hp::BootRequest&) override {
    std::lock_guard<std::mutex> lk(state().mu);
    state().boots.push_back(name());
    if (state().boot_failures_left > 0) {
      --state().boot_failures_left;
      throw hp::BootError(name(), "qemu exited with status 1", "[    1.2] Kernel panic - not syncing: VFS: Unable to mount root fs");
    }
    // A fresh guest's agent knows no case of the guest before it, as the runner contract has it
    // (tests/common/runner_contract.hpp: FakeAgent::replace_guest).
    if (const auto it = state().fakes.find(name()); it != state().fakes.end())
      it->second->replace_guest("boot-" + std::to_string(state().boots.size()));
    hp::BootResult b;
    b.boot_to_ready_s = 0.5;
    b.accelerator = "kvm";
    return b;
  }
  hp::Liveness liveness() override {
    ++state().liveness_calls;
    std::lock_guard<std::mutex> lk(state().mu);
    return state().liveness;
  }
  std::string diagnose(std::size_t) override { return name() + ": console says goodbye"; }
  void release() noexcept override {
    std::lock_guard<std::mutex> lk(state().mu);
    ++state().instance_releases;
  }
};

class TestPool : public hp::Pool {
 public:
  explicit TestPool(std::shared_ptr<const hp::EngineConfig> c) : cfg_(std::move(c)) {}
  std::string kind() const override { return "test-pool"; }
  std::vector<hp::HostCapacity> capacity() override {
    std::lock_guard<std::mutex> lk(state().mu);
    if (!state().unreachable.empty())
      return {hp::HostCapacity{"test://hv1", 0, 0, cfg_->vms, {}, {}, {}, state().unreachable}};
    return {hp::HostCapacity{"test://hv1", state().cores, state().memory_mib, cfg_->vms, {}, {}, {}, {}}};
  }
  std::vector<std::unique_ptr<hp::Instance>> acquire(const hp::AcquireContext&) override {
    std::lock_guard<std::mutex> lk(state().mu);
    ++state().acquires;
    std::vector<std::unique_ptr<hp::Instance>> out;
    for (const auto& vm : cfg_->vms) {
      hp::Guest g;
      g.name = vm;
      g.host = "test://hv1";
      g.url = state().agents.at(vm).first;
      g.token_file = state().agents.at(vm).second;
      g.accelerator = "kvm";
      out.push_back(std::make_unique<TestGuest>(g, cfg_->fresh_guest_per_case));
    }
    return out;
  }
  void release() noexcept override {
    std::lock_guard<std::mutex> lk(state().mu);
    ++state().releases;
  }
  void release_orphans(const hp::AcquireContext&) noexcept override {
    std::lock_guard<std::mutex> lk(state().mu);
    ++state().orphan_releases;
  }
  std::string describe() const override { return "engine test-pool: guests on test://hv1"; }

 private:
  std::shared_ptr<const hp::EngineConfig> cfg_;
};

[[maybe_unused]] const bool kRegistered = hp::register_engine(
    {"test-pool", "fake agents for the runner's unit tests",
     [] {
       hp::Capabilities c;
       c.fresh_boot_per_case = c.boot_variants = true;
       return c;
     }(),
     [](harness::yaml::Section& s, const hp::ParseContext&) -> std::shared_ptr<hp::EngineConfig> {
       auto c = std::make_shared<TestConfig>();
       c->fresh_guest_per_case = s.scalar<bool>("fresh_guest_per_case", true);
       const YAML::Node v = s.get("vms", true);
       for (std::size_t i = 0; i < v.size(); ++i) c->vms.push_back(s.as<std::string>(v[i], s.field("vms")));
       return c;
     },
     [](std::shared_ptr<const hp::EngineConfig> c, const hp::OpenContext&) -> std::unique_ptr<hp::Pool> {
       return std::make_unique<TestPool>(std::move(c));
     },
     nullptr});  // no `vm down` for the test engine

/// One triplet on each of `vms` VMs of the test engine; `provider_extra` adds provider keys.
std::string campaign_yaml(int vms, int retries, const std::string& provider_extra = "") {
  std::string v;
  for (int i = 0; i < vms; ++i) v += (i ? ", vm" : "vm") + std::to_string(i);
  return test_support::small_campaign_yaml("{kind: test-pool, vms: [" + v + "]" + provider_extra + "}",
                                           "repeats: 1, dose_mib: 96",
                                           "runner: {max_infra_retries: " + std::to_string(retries) +
                                               ", poll_interval_ms: 20}\n");
}

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  q.step();
  return q.int64(0);
}

std::string text(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  if (!q.step() || q.is_null(0)) return "(none)";
  return q.text(0);
}

std::string slurp_file(std::FILE* f) {
  std::rewind(f);
  std::string out;
  for (int ch; (ch = std::fgetc(f)) != EOF;) out += static_cast<char>(ch);
  return out;
}

/// A run on `n` fake agents through the test engine.
struct Fleet {
  TempDir d;
  std::vector<std::unique_ptr<fake::FakeAgent>> agents;
  hc::RunOptions o;
  std::FILE* out = std::tmpfile();
  explicit Fleet(int n) {
    state().reset();
    write_token(d / "token", "tok");
    for (int i = 0; i < n; ++i) {
      agents.push_back(std::make_unique<fake::FakeAgent>(d / ("agent" + std::to_string(i)), "tok"));
      agents.back()->polls_to_finish = 5;  // walks setup, warmup, pressure, recovery, restoration
      state().agents["vm" + std::to_string(i)] = {agents.back()->url(), d / "token"};
      state().fakes["vm" + std::to_string(i)] = agents.back().get();
    }
    o.db_path = d / "c.db";
    o.progress_tty = 0;
    o.out = out;
  }
  ~Fleet() {
    std::lock_guard<std::mutex> lk(state().mu);
    state().fakes.clear();  // its agents go with it
    std::fclose(out);
  }
  hc::Campaign campaign(const std::string& yaml) {
    write(d / "t.yaml", yaml);
    return hc::load_campaign(d / "t.yaml");
  }
  std::string log() { return slurp_file(out); }
};

}  // namespace

TEST(RunnerPool, BootErrorIsAnInfraFailureBeforeTheCaseWithTheConsoleTail) {
  Fleet f(1);
  state().boot_failures_left = 1;
  const auto c = f.campaign(campaign_yaml(1, 1));
  const auto s = hc::run_campaign(c, f.o);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.lost, 0);
  EXPECT_EQ(s.infra_failed, 0);
  EXPECT_EQ(s.attempts_this_run, 4);  // the failed boot's attempt, its rerun, the two others
  EXPECT_EQ(state().boots.size(), 4u);
  EXPECT_EQ(f.agents[0]->posts(), 3);  // the case whose guest never came up was never submitted
  for (const auto& [id, n] : f.agents[0]->submissions()) EXPECT_EQ(n, 1) << id;
  results::Db db(f.o.db_path, results::Db::Mode::ReadOnly);
  const std::string first = "(SELECT case_id FROM schedule ORDER BY ordinal LIMIT 1)";
  EXPECT_EQ(text(db, "SELECT group_concat(attempt || ':' || status, ' ') FROM (SELECT * FROM attempts WHERE case_id = " +
                         first + " ORDER BY attempt)"),
            "1:infra_failed 2:completed");
  EXPECT_EQ(text(db, "SELECT error FROM attempts WHERE attempt = 1 AND case_id = " + first),
            "fresh boot before the case failed: vm0: qemu exited with status 1");
  EXPECT_THAT(text(db, "SELECT json_extract(detail_json, '$.boot.console_tail') FROM attempts WHERE attempt = 1 AND "
                       "case_id = " + first),
              HasSubstr("Kernel panic - not syncing"));
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.submitted') FROM attempts WHERE attempt = 1 AND case_id = " +
                         first),
            "0");
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.boot.accelerator') FROM attempts WHERE attempt = 2 AND "
                     "case_id = " + first),
            "kvm");
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE status = 'lost'"), 0);
  EXPECT_EQ(state().releases, 1);
}

TEST(RunnerPool, CapacityIsRefusedBeforeAnythingIsStoredOrBooted) {
  Fleet f(3);
  state().cores = 2;
  state().memory_mib = 20000;
  const auto c = f.campaign(campaign_yaml(3, 1));
  try {
    hc::run_campaign(c, f.o);
    ADD_FAILURE() << "a campaign beyond its host's capacity ran";
  } catch (const hp::CapacityError& e) {
    EXPECT_THAT(e.what(), HasSubstr("host test://hv1: 3 guest(s) (vm0, vm1, vm2) of 1 vCPU / 1024 MiB, on 2 online "
                                    "core(s) (at most 1 guest vCPU(s): cores - 1) and 20000 MiB available"));
    EXPECT_THAT(e.what(), HasSubstr("provider.overcommit: true"));
  }
  EXPECT_FALSE(std::filesystem::exists(f.o.db_path));
  EXPECT_EQ(state().acquires, 0);
  EXPECT_TRUE(state().boots.empty());
  for (const auto& a : f.agents) EXPECT_EQ(a->posts(), 0);
  EXPECT_THAT(f.log(), HasSubstr("REFUSED"));
  // Memory alone refuses too.
  state().cores = 64;
  state().memory_mib = 2000;
  EXPECT_THROW(hc::run_campaign(c, f.o), hp::CapacityError);
}

// A lab is planned offline: a host that does not answer is not judged at plan time, the
// schedule (and its hash) is the one planned when it answers, and `harness run` refuses to
// start until it answers (nothing stored, nothing booted).
TEST(RunnerPool, AnUnreachableHostIsNotJudgedAtPlanAndRefusedAtRun) {
  Fleet f(2);
  const auto c = f.campaign(campaign_yaml(2, 1));
  const auto online = hc::preview_engine(c);
  EXPECT_TRUE(online.capacity.unreachable.empty());
  const std::string online_hash = hc::plan(c).sha256_hex;
  state().unreachable = "cannot connect: no route to host";
  const auto offline = hc::preview_engine(c);
  EXPECT_TRUE(offline.capacity.ok);
  ASSERT_EQ(offline.capacity.unreachable.size(), 1u);
  EXPECT_THAT(offline.capacity.table, HasSubstr("not judged: host test://hv1 unreachable; judged again at run"));
  EXPECT_EQ(hc::plan(c).sha256_hex, online_hash);
  try {
    hc::run_campaign(c, f.o);
    ADD_FAILURE() << "a run started with a host that does not answer";
  } catch (const hp::PoolError& e) {
    EXPECT_THAT(e.what(), HasSubstr("capacity cannot be judged"));
    EXPECT_THAT(e.what(), HasSubstr("test://hv1: cannot connect: no route to host"));
  }
  EXPECT_FALSE(std::filesystem::exists(f.o.db_path));
  EXPECT_EQ(state().acquires, 0);
  EXPECT_TRUE(state().boots.empty());
}

// `harness plan` of a libvirt campaign whose hypervisor does not answer (a socket nothing
// listens on): planned, the host "not judged", the same schedule hash as planned with a hosts
// file (no hypervisor asked at all), and the wall time says the boot is assumed.
TEST(RunnerPool, HarnessPlanOfALibvirtLabWorksOffline) {
  TempDir d;
  const std::string uri = "qemu+unix:///system?socket=" + (d / "no-libvirtd.sock");
  write(d / "lab.yaml", test_support::small_campaign_yaml("{kind: libvirt, hosts: [{uri: \"" + uri + "\", guests: 2}]}"));
  write(d / "hosts.yaml", "hosts:\n  - {name: vm0, url: \"http://127.0.0.1:1\", token_file: " + (d / "tok") +
                              "}\n  - {name: vm1, url: \"http://127.0.0.1:2\", token_file: " + (d / "tok") + "}\n");
  write_token(d / "tok", "tok");
  const std::string env = "HARNESS_ACCEL_PROBE_DIR=" + (d / "probe") + " ";
  const auto off = test_support::run_harness("plan " + (d / "lab.yaml"), d / "out.txt", test_support::LogMode::Replace, env);
  EXPECT_EQ(off.code, 0) << off.out;
  EXPECT_THAT(off.out, HasSubstr("not judged: host " + uri + " unreachable; judged again at run"));
  EXPECT_THAT(off.out, HasSubstr("a boot per case 10.0 s (assumed 10 s, not yet measured)"));
  const auto with_hosts = test_support::run_harness("plan " + (d / "lab.yaml") + " --hosts " + (d / "hosts.yaml"),
                                                    d / "out2.txt", test_support::LogMode::Replace, env);
  EXPECT_EQ(with_hosts.code, 0) << with_hosts.out;
  auto hash = [](const std::string& out) {
    const auto at = out.find("schedule sha256 ");
    return at == std::string::npos ? std::string("(none)") : out.substr(at + 16, 64);
  };
  EXPECT_EQ(hash(off.out), hash(with_hosts.out));
  EXPECT_NE(hash(off.out), "(none)");
  // what an earlier run measured on that host is used, offline too
  hp::record_boot("libvirt", uri, "tcg", 35.2, d / "probe");
  hp::record_kvm_trial("libvirt", uri, 31.0, d / "probe");
  const auto measured = test_support::run_harness("plan " + (d / "lab.yaml"), d / "out3.txt", test_support::LogMode::Replace, env);
  EXPECT_EQ(measured.code, 0) << measured.out;
  EXPECT_THAT(measured.out, HasSubstr("a boot per case 35.2 s (35.2 s measured on " + uri + " on "));
  EXPECT_THAT(measured.out, HasSubstr("KVM trial 31.0 s measured on " + uri));
  EXPECT_EQ(hash(measured.out), hash(off.out));
}

// The wall time uses each host's measured boot for its guests, the assumed one elsewhere, and
// adds every host's measured trial and upload once.
TEST(RunnerPool, WallTimeUsesEachHostsMeasuredCosts) {
  TempDir d;
  write(d / "t.yaml", campaign_yaml(2, 1));
  const auto c = hc::load_campaign(d / "t.yaml");
  const auto s = hc::plan(c);  // 3 cases per VM, 3 s of phases each
  hp::HostCosts slow;
  slow.host = "qemu+ssh://hv2/system";
  slow.boot = {40.0, 1764892800, 5};
  slow.kvm_trial = {30.0, 1764892800, 1};
  slow.upload = {20.0, 1764892800, 1};
  hp::HostCosts unknown;
  unknown.host = "qemu:///system";
  const auto e = hc::estimate_wall_time(c, s, true, {{{"vm0"}, unknown}, {{"vm1"}, slow}});
  const double per_case_vm1 = 3 + 40.0 + 3.5 + 0.3, per_case_vm0 = 3 + 10.0 + 3.5 + 0.3;
  EXPECT_DOUBLE_EQ(e.once_s, 50.0);
  EXPECT_DOUBLE_EQ(e.wall_s, 50.0 + 3 * per_case_vm1);
  EXPECT_NEAR(e.guest_hours, 3 * (per_case_vm0 + per_case_vm1) / 3600.0, 1e-9);
  EXPECT_THAT(e.text, HasSubstr("a boot per case 40.0 s (40.0 s measured on qemu+ssh://hv2/system on 2025-12-05 "
                                "(median of 5 boots))"));
  EXPECT_THAT(e.text, HasSubstr("after 50 s once per run: KVM trial 30.0 s measured on qemu+ssh://hv2/system on "
                                "2025-12-05 (none when its verdict is cached); image upload 20.0 s"));
  EXPECT_THAT(e.text, HasSubstr("boots on qemu:///system: assumed 10 s, not yet measured"));
  // without a boot per case the boots do not count; the once-per-run costs still do
  const auto reused = hc::estimate_wall_time(c, s, false, {{{"vm0"}, unknown}, {{"vm1"}, slow}});
  EXPECT_DOUBLE_EQ(reused.wall_s, 50.0 + 3 * (3 + 3.5 + 0.3));
}

TEST(RunnerPool, OvercommitRunsAndEveryCaseRecordsItAndItsHost) {
  Fleet f(3);
  state().cores = 2;
  const auto c = f.campaign(campaign_yaml(3, 1, ", overcommit: true"));
  const auto s = hc::run_campaign(c, f.o);
  EXPECT_EQ(s.completed, 9);
  EXPECT_EQ(s.engine, "engine test-pool: guests on test://hv1");
  const std::string log = f.log();
  EXPECT_THAT(log, HasSubstr("OVERCOMMITTED (provider.overcommit: true)"));
  EXPECT_THAT(log, HasSubstr("engine test-pool: guests on test://hv1"));
  {
    results::Db db(f.o.db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE overcommitted = 1 AND host_uri = 'test://hv1'"), 9);
  }
  const std::string w = analysis::overcommit_warning(f.o.db_path);
  EXPECT_THAT(w, HasSubstr("9 case(s) ran on an overcommitted hypervisor host (test://hv1"));
  bool host_row = false;
  for (const auto& [k, v] : analysis::environment_rows(f.o.db_path, {"t-vm0-fast-structured-r1-static-zram"}))
    if (k == "hypervisor host (cases.host_uri)") host_row = v == "test://hv1";
  EXPECT_TRUE(host_row);
}

TEST(RunnerPool, WithinCapacityCasesRecordTheirHostAndNoOvercommit) {
  Fleet f(2);
  const auto c = f.campaign(campaign_yaml(2, 1, ", overcommit: true"));
  EXPECT_EQ(hc::run_campaign(c, f.o).completed, 6);
  results::Db db(f.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE overcommitted = 0 AND host_uri = 'test://hv1'"), 6);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE engine_kind = 'test-pool'"), 6);  // the engine, recorded
  EXPECT_EQ(analysis::overcommit_warning(f.o.db_path), "");
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE json_extract(detail_json, '$.boot.boot_to_ready_s') = 0.5"), 6);
}

TEST(RunnerPool, TheInstanceDecidesFreshBootsAndReleaseFollowsTheRun) {
  Fleet f(1);
  const auto c = f.campaign(campaign_yaml(1, 1, ", fresh_guest_per_case: false"));
  EXPECT_EQ(hc::run_campaign(c, f.o).completed, 3);
  EXPECT_TRUE(state().boots.empty());  // a reused guest: no fresh boot, the agent's health is waited for instead
  EXPECT_GE(f.agents[0]->health_gets.load(), 3);
  EXPECT_EQ(state().acquires, 1);
  EXPECT_EQ(state().releases, 1);
  EXPECT_EQ(state().instance_releases, 0);  // what is left is released through the pool, once
  // Nothing left: no acquire, the earlier runner's orphans are released instead.
  EXPECT_EQ(hc::run_campaign(c, f.o).attempts_this_run, 0);
  EXPECT_EQ(state().acquires, 1);
  EXPECT_EQ(state().orphan_releases, 1);
}

TEST(RunnerPool, AVanishedCaseRecordsTheEnginesEvidenceAndStaysLost) {
  Fleet f(1);
  const std::string x = "t-vm0-fast-structured-r1-delayed-activation";
  // The guest dies in pressure as the runner contract has it (tests/common/runner_contract.hpp):
  // its agent silent, then a fresh guest at the same address.
  auto& a = *f.agents[0];
  a.hold_in = [&](const std::string& base, int n) { return base == x && n == 1 ? std::string("pressure") : ""; };
  const auto c = f.campaign(campaign_yaml(1, 1));
  hc::RunSummary s;
  std::thread run([&] { s = hc::run_campaign(c, f.o); });
  bool met = a.wait_until_held(std::chrono::seconds(60));
  a.silent = true;
  met = met && test_support::wait_until([&] { return a.silent_answers.load() >= 1; }, std::chrono::seconds(60));
  a.replace_guest("boot-2");
  a.silent = false;
  a.release_hold();
  run.join();
  ASSERT_TRUE(met) << "the runner never met the silence";
  EXPECT_EQ(s.lost, 1);
  EXPECT_EQ(s.completed, 2);
  results::Db db(f.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + x + "'"), "lost");
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.guest.liveness') FROM attempts WHERE case_id = '" + x + "'"),
            "gone");
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.guest.console_tail') FROM attempts WHERE case_id = '" + x + "'"),
            "vm0: console says goodbye");
  EXPECT_EQ(text(db, "SELECT host_uri FROM cases WHERE case_id = '" + x + "'"), "test://hv1");
  EXPECT_EQ(text(db, "SELECT engine_kind FROM cases WHERE case_id = '" + x + "'"), "test-pool");  // a lost case too
  EXPECT_EQ(text(db, "SELECT accelerator FROM cases WHERE case_id = '" + x + "'"), "kvm");
}

TEST(RunnerPool, HostsFileOverrideReplacesTheCampaignsEngine) {
  Fleet f(1);
  write(f.d / "hosts.yaml", "hosts:\n  - name: vm0\n    url: " + f.agents[0]->url() + "\n    token_file: " +
                                (f.d / "token") + "\n    accelerator: real\n    hypervisor: hv7\n");
  const auto c = f.campaign(campaign_yaml(1, 1));
  f.o.hosts_file = f.d / "hosts.yaml";
  const auto s = hc::run_campaign(c, f.o);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(state().acquires, 0);  // the test engine was never asked
  EXPECT_TRUE(state().boots.empty());
  EXPECT_THAT(s.engine, HasSubstr("engine hosts: 1 guest(s) (vm0) from " + f.d / "hosts.yaml"));
  results::Db db(f.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE host_uri = 'hv7' AND overcommitted IS NULL AND "
                      "accelerator = 'real'"),
            3);
}

TEST(RunnerPool, HarnessPlanRefusesALocalCampaignBeyondThisMachineAndPrintsTheEstimate) {
  TempDir d;
  const int cores = hp::local_guest::online_cpus();
  std::string smoke = testfiles::read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml");
  const std::string big = std::to_string(cores);  // cores guests > cores - 1
  std::string vms;
  for (int i = 0; i < cores; ++i) vms += (i ? ", vm" : "vm") + std::to_string(i);
  auto replace = [](std::string t, const std::string& from, const std::string& to) {
    return t.replace(t.find(from), from.size(), to);
  };
  write(d / "big.yaml", replace(smoke, "count: 1", "count: " + big));
  const auto refused = test_support::run_harness("plan " + (d / "big.yaml") + " " + (d / "big.db"), d / "out.txt");
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("capacity before anything boots (engine local-qemu"));
  EXPECT_THAT(refused.out, HasSubstr("host " + hp::local_guest::local_host_name() + ": " + big + " guest(s)"));
  EXPECT_THAT(refused.out, HasSubstr(std::to_string(cores) + " online core(s)"));
  EXPECT_THAT(refused.out, HasSubstr("MiB available"));
  EXPECT_THAT(refused.out, HasSubstr("stored nothing: capacity refused"));
  EXPECT_FALSE(std::filesystem::exists(d / "big.db"));
  write(d / "over.yaml", replace(replace(smoke, "count: 1", "count: " + big), "fresh_guest_per_case: true",
                                 "fresh_guest_per_case: true\n  overcommit: true"));
  const auto over = test_support::run_harness("plan " + (d / "over.yaml"), d / "out.txt");
  EXPECT_EQ(over.code, 0) << over.out;
  EXPECT_THAT(over.out, HasSubstr("OVERCOMMITTED (provider.overcommit: true)"));
  // smoke: 3 cases on one guest, 50 s of phases + 13.8 s overhead each.
  // (its own probe directory: no boot measured on this machine, the boot is assumed)
  const auto ok = test_support::run_harness("plan " + std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml",
                                            d / "out.txt", test_support::LogMode::Replace,
                                            "HARNESS_ACCEL_PROBE_DIR=" + (d / "probe") + " ");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_THAT(ok.out, HasSubstr("expected wall time: 3 min 11 s with 1 guest(s) running at once (the busiest runs 3 "
                                "case(s) of 50 s of phases + 13.8 s overhead: a boot per case 10.0 s (assumed 10 s, not "
                                "yet measured) + setup and finish 3.5 s + restoration 0.3 s"));
  EXPECT_THAT(ok.out, HasSubstr("engine local-qemu: 1 guest(s) (vm0) on this machine"));
}

TEST(RunnerPool, HarnessVmUpAppliesTheSameCapacityCheck) {
  // `harness vm up` counts the cores it may run on (sched_getaffinity, local_host.cpp), and a
  // child inherits this thread's affinity: pinned to one core it has room for no guest vCPU
  // (cores - 1 = 0), on any machine, so one guest never fits.
  cpu_set_t before, one;
  ASSERT_EQ(::sched_getaffinity(0, sizeof before, &before), 0) << std::strerror(errno);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &before)) ++first;
  ASSERT_LT(first, CPU_SETSIZE);
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0) << std::strerror(errno);
  ASSERT_EQ(hp::local_guest::online_cpus(), 1);
  TempDir d;
  const auto r = test_support::run_harness("vm up --count 1", d / "out.txt", test_support::LogMode::Replace,
                                           "XDG_CACHE_HOME=" + (d / "xdg") + " ");
  ASSERT_EQ(::sched_setaffinity(0, sizeof before, &before), 0) << std::strerror(errno);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("capacity: the guests do not fit their host(s)"));
  EXPECT_THAT(r.out, HasSubstr("give --overcommit"));
  EXPECT_FALSE(std::filesystem::exists(d / "xdg/reclaim-harness/vms/vm0/meta.json"));  // nothing booted
}

TEST(RunnerPool, ASilentAgentWhoseGuestIsGoneIsLostWithTheEvidence) {
  // The pre-pressure grace is shortened so that a 60 s rule could not be what decides.
  Fleet f(1);
  f.o.silence.before_pressure = std::chrono::milliseconds(200);
  f.agents[0]->hold_submission = 1;
  const auto c = f.campaign(campaign_yaml(1, 1));
  hc::RunSummary s;
  std::thread run([&] { s = hc::run_campaign(c, f.o); });
  const bool held = f.agents[0]->wait_until_held(std::chrono::seconds(60));
  f.agents[0]->silent = true;
  // The engine is asked during the silence and again for the lost case's evidence.
  const bool asked = test_support::wait_until([] { return state().liveness_calls.load() >= 2; },
                                              std::chrono::seconds(60));
  f.agents[0]->silent = false;
  f.agents[0]->release_hold();
  run.join();
  ASSERT_TRUE(held && asked) << "held " << held << ", liveness asked " << state().liveness_calls.load();
  EXPECT_EQ(s.lost, 1);
  EXPECT_EQ(s.completed, 2);
  for (const auto& [id, n] : f.agents[0]->submissions()) EXPECT_EQ(n, 1) << id;
  results::Db db(f.o.db_path, results::Db::Mode::ReadOnly);
  const std::string x = text(db, "SELECT case_id FROM schedule ORDER BY ordinal LIMIT 1");
  EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + x + "'"), "lost");
  EXPECT_THAT(text(db, "SELECT json_extract(outcome_json, '$.lost.reason') FROM cases WHERE case_id = '" + x + "'"),
              HasSubstr("the engine says the guest is gone (liveness)"));
  const std::string at = "FROM attempts WHERE case_id = '" + x + "'";
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].liveness[0].answer') " + at), "gone");
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].phase') " + at), "pressure");
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.guest.liveness') " + at), "gone");
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.guest.console_tail') " + at), "vm0: console says goodbye");
}

TEST(RunnerPool, ASilentAgentWhoseGuestRunsIsAskedAgainAndImported) {
  Fleet f(1);
  f.o.silence.before_pressure = std::chrono::milliseconds(200);
  state().liveness = hp::Liveness::Running;
  f.agents[0]->hold_submission = 1;
  const auto c = f.campaign(campaign_yaml(1, 1));
  hc::RunSummary s;
  std::thread run([&] { s = hc::run_campaign(c, f.o); });
  const bool held = f.agents[0]->wait_until_held(std::chrono::seconds(60));
  const auto t0 = std::chrono::steady_clock::now();
  f.agents[0]->silent = true;
  const bool asked = test_support::wait_until(
      [&] {
        return state().liveness_calls.load() >= 3 && std::chrono::steady_clock::now() - t0 > std::chrono::seconds(1);
      },
      std::chrono::seconds(60));
  f.agents[0]->silent = false;
  f.agents[0]->release_hold();
  run.join();
  ASSERT_TRUE(held && asked) << "held " << held << ", liveness asked " << state().liveness_calls.load();
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.lost, 0);
  EXPECT_EQ(f.agents[0]->bundle_downloads.load(), 3);
  results::Db db(f.o.db_path, results::Db::Mode::ReadOnly);
  const std::string x = text(db, "SELECT case_id FROM schedule ORDER BY ordinal LIMIT 1");
  const std::string at = "FROM attempts WHERE case_id = '" + x + "'";
  EXPECT_EQ(text(db, "SELECT status " + at), "completed");
  // Liveness answers are recorded when they change: one "running" for the whole silence,
  // although the engine was asked at every unanswered poll.
  EXPECT_EQ(count(db, "SELECT json_array_length(detail_json, '$.silence.episodes[0].liveness') " + at), 1);
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].liveness[0].answer') " + at), "running");
  EXPECT_NE(text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].end_unix_ns') " + at), "(none)");
}

// The A/B environment's "host engine" is the engine each case recorded (cases.engine_kind),
// not a guess from its host: a hosts-file hypervisor written as a URI is the hosts engine. A
// case of an older DB (engine_kind NULL) keeps the guess from host_uri.
TEST(RunnerPool, TheHostEngineOfAnAbEnvironmentIsTheRecordedEngineKind) {
  TempDir dir;
  const std::string path = dir / "ab.db";
  results::Db db(path, results::Db::Mode::Create);
  db.exec(
      "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json, host_uri, "
      "engine_kind) VALUES "
      "('b1', 'x', 'vm0', 'r', 1, 'static-zram', 'completed', '{\"variant\": {\"name\": \"baseline\"}}', "
      "'qemu+ssh://hv2/system', 'hosts'),"
      "('c1', 'x', 'vm0', 'r', 1, 'static-zram', 'completed', '{\"variant\": {\"name\": \"candidate\"}}', "
      "'qemu+ssh://hv2/system', NULL)");
  EXPECT_EQ(hc::read_variant_environment(db, "baseline", path).fields.at("host engine"),
            (std::set<std::string>{"hosts"}));
  EXPECT_EQ(hc::read_variant_environment(db, "candidate", path).fields.at("host engine"),
            (std::set<std::string>{"libvirt"}));  // not recorded: guessed from the URI, as before
}
