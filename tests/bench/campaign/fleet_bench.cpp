// fleet_bench: the campaign runner (`harness run` through the hosts engine) at fleet scale,
// by simulation. Per fleet size N: N stub agents (tests/common/fake_agent.hpp, a real
// cpp-httplib server per host on 127.0.0.1) run in a forked child process, so the runner's
// getrusage is the runner's alone; every case is instant (done at the first status poll)
// and its bundle has the size a 9-minute case produces (harness::case_::write_bundle: two canaries x
// 5,400 requests, 540 telemetry samples at 1 Hz, 540 controller windows).
// Prints per N: runner CPU per case (getrusage RUSAGE_SELF), wall per case and host, the
// stub's bundle write time per case, the wall per case beyond the stub's, DB bytes per case;
// then the import time per bundle (import_attempt under the scheduled id, side by side with
// the former rewrite-then-import, one at a time, into the DB of
// the largest run) and the curve over N (each N's figures over N = 1's).
// Asserts nothing about time; exits non-zero only when a run does not complete every case
// (the ctest smoke run checks it still runs).
// Usage: fleet_bench [--hosts 1,9,50,200] [--cases 1002] [--requests 5400] [--seconds 540]
//                    [--imports 50] [--keep DIR]
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/runner/runner.hpp"
#include "harness/case/run/bundle.hpp"

#include "tests/common/fake_agent.hpp"

#include <CLI/CLI.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
namespace hc = harness::campaign;

namespace {

struct Size {
  int requests = 5400;  ///< per canary (9 min at the canaries' 100 ms period)
  int seconds = 540;    ///< telemetry samples and controller windows (1 Hz)
};

/// A study-sized bundle of the case `spec` describes (the rows a 9-minute case writes).
harness::case_::CaseBundle study_bundle(const nlohmann::json& spec, const Size& z) {
  harness::case_::CaseBundle b;
  b.case_id = spec.at("case_id");
  b.campaign = spec.at("campaign");
  b.vm = spec.at("vm");
  b.regime = spec.at("regime");
  b.repeat = spec.at("repeat");
  if (spec.contains("triplet_id")) b.triplet_id = spec["triplet_id"].get<std::string>();
  b.configuration = spec.at("configuration");
  if (spec.contains("dose_bytes")) b.dose_bytes = spec["dose_bytes"].get<std::int64_t>();
  b.status = "completed";
  b.accelerator = "kvm";
  b.kernel_release = "6.1.0-57-cloud-amd64";
  b.source_commit = "0123456789abcdef0123456789abcdef01234567";
  b.source_dirty = 0;
  b.page_size_bytes = 4096;
  b.started_unix_ns = 1;
  b.ended_unix_ns = 2;
  b.spec_json = spec.dump();
  b.outcome_json = "{}";
  const std::int64_t t0 = 1'000'000'000'000, s = 1'000'000'000;
  const std::int64_t third = z.seconds / 3;
  b.phases = {{"warmup", t0, t0 + third * s},
              {"pressure", t0 + third * s, t0 + 2 * third * s},
              {"recovery", t0 + 2 * third * s, t0 + z.seconds * s},
              {"restoration", t0 + z.seconds * s, t0 + z.seconds * s + 3 * s}};
  for (const char* canary : {"compute", "sqlite"})
    for (int i = 0; i < z.requests; ++i) {
      harness::case_::CanaryRequestRow r;
      r.canary = canary;
      r.seq = i;
      r.scheduled_ns = t0 + i * 100'000'000LL;
      r.wake_ns = r.scheduled_ns + 40'000 + (i * 7919) % 60'000;
      r.completion_ns = *r.wake_ns + 1'500'000 + (i * 104729) % 900'000;
      r.minflt = i % 13;
      r.majflt = i % 97 == 0;
      r.nvcsw = 2;
      r.nivcsw = i % 3;
      b.requests.push_back(r);
    }
  for (int i = 0; i < z.seconds; ++i) {
    harness::case_::TelemetrySample t;
    t.t_ns = t0 + i * s;
    t.phase = i < third ? "warmup" : i < 2 * third ? "pressure" : "recovery";
    t.bg_some_us = t.bg_full_us = t.fg_some_us = t.fg_full_us = t.sys_some_us = t.sys_full_us = i * 1000LL;
    t.bg_current_bytes = t.fg_current_bytes = 300LL << 20;
    t.bg_swap_current_bytes = t.fg_swap_current_bytes = i * 4096LL;
    t.bg_pgsteal = t.bg_pgscan = t.bg_workingset_refault_anon = t.bg_workingset_refault_file = t.bg_pgmajfault = i;
    t.fg_pgsteal = t.fg_pgscan = t.fg_workingset_refault_anon = t.fg_workingset_refault_file = t.fg_pgmajfault = i;
    t.bg_oom = t.bg_oom_kill = t.fg_oom = t.fg_oom_kill = 0;
    t.pswpin = t.pswpout = i * 10LL;
    t.zram_orig_data_bytes = t.zram_compr_data_bytes = t.zram_mem_used_bytes = i * 65536LL;
    t.zram_swap_used_kib = t.swapfile_used_kib = i * 64LL;
    t.read_ns = t.t_ns + 20'000;
    t.steal_us = 0;
    t.extra = {{"read_duration_ns", 180'000}};
    b.telemetry.push_back(t);
    harness::case_::ControllerEvent w;
    w.t_ns = t.t_ns + 20'000;
    w.kind = "window";
    w.some_total_us = i * 1000LL;
    w.delta_us = 1000;
    w.counting = 0;
    w.consecutive = 0;
    w.window_ns = s;
    w.irregular = 0;
    b.events.push_back(w);
  }
  harness::case_::ControllerEvent trig;
  trig.t_ns = t0 + (third + 5) * s;
  trig.kind = b.configuration == "static-zram" ? "would_trigger" : "trigger";
  b.events.push_back(trig);
  if (b.configuration == "bounded-reclaim" && b.dose_bytes) {
    harness::case_::ReclaimRow r;
    r.requested_bytes = *b.dose_bytes;
    r.start_ns = trig.t_ns;
    r.end_ns = trig.t_ns + 400'000'000;
    r.write_errno = 0;
    r.achieved_bytes = *b.dose_bytes;
    r.achieved_counter = "pgsteal_proactive";
    b.reclaims.push_back(r);
  }
  b.restoration = harness::case_::RestorationRow{t0 + z.seconds * s, t0 + z.seconds * s + 3 * s, true, nullptr};
  return b;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double cpu_s(const rusage& r) {
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

void read_exact(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r <= 0) throw std::runtime_error("stub process: pipe closed early");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

/// The stub agents' process: N fake agents, their ports on `out`, then serve until `in`
/// closes; finally the bundles written and their total write time (ns) on `out`.
[[noreturn]] void stub_main(int n, const fs::path& dir, const Size& z, int in, int out) {
  std::atomic<std::int64_t> write_ns{0}, bundles{0};
  {
    std::vector<std::unique_ptr<fake::FakeAgent>> agents;
    for (int i = 0; i < n; ++i) {
      agents.push_back(std::make_unique<fake::FakeAgent>((dir / ("agent" + std::to_string(i))).string(), "tok"));
      agents.back()->polls_to_finish = 0;  // instant: done at the first status poll
      agents.back()->set_boot_id("fleet-stub-boot-" + std::to_string(i));  // as a real agent reports it
      agents.back()->bundle_writer = [&, z](const std::string& path, const nlohmann::json& spec, fake::Outcome) {
        const auto b = study_bundle(spec, z);
        const std::int64_t t = now_ns();
        harness::case_::write_bundle(path, b);
        write_ns += now_ns() - t;
        ++bundles;
      };
      const int port = agents.back()->port();
      if (::write(out, &port, sizeof port) != sizeof port) ::_exit(3);
    }
    char c;
    while (::read(in, &c, 1) > 0) {
    }
  }
  const std::int64_t r[2] = {bundles.load(), write_ns.load()};
  if (::write(out, r, sizeof r) != sizeof r) ::_exit(3);
  ::_exit(0);
}

std::string campaign_yaml(int n, int triplets) {
  std::string v;
  for (int i = 0; i < n; ++i) v += (i ? ", vm" : "vm") + std::to_string(i);
  return "name: fleet\nkind: smoke\nseed: 5\npinned_commit: any\nvm: {vcpus: 1, memory_mib: 1024}\n"
         "provider: {kind: hosts, vms: [" + v + "]}\n"
         "phases_s: {warmup: 180, pressure: 180, recovery: 180}\n"
         "cgroups: {bg_memory_max_mib: 300}\n"
         "backend:\n  zram: {disksize_mib: 512, algorithm: lzo-rle, priority: 100}\n"
         "  swapfile: {path: /var/lib/harness/swapfile, priority: 10}\n"
         "pressure: {allocation_mib: 600, active_set_mib: 128}\n"
         "regimes:\n  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n"
         "canaries: {}\ntrigger: {}\n"
         "configurations: [static-zram, delayed-activation, bounded-reclaim]\n"
         "design: {kind: matched-triplets, triplets_per_regime: " + std::to_string(triplets) + ", dose_mib: 96}\n"
         "runner: {max_infra_retries: 0, poll_interval_ms: 1}\n";
}

struct Result {
  int hosts = 0, cases = 0;
  double runner_cpu_ms = 0;       ///< per case
  double wall_ms = 0;             ///< per case and host (wall x hosts / cases)
  double stub_ms = 0;             ///< stub's bundle write per case
  double db_bytes = 0;            ///< per case
  double wall_s = 0;
  fs::path db;
};

Result run_fleet(int n, int cases, const Size& z, const fs::path& dir) {
  fs::create_directories(dir);
  int to_stub[2], from_stub[2];
  if (::pipe(to_stub) != 0 || ::pipe(from_stub) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(to_stub[1]);
    ::close(from_stub[0]);
    stub_main(n, dir, z, to_stub[0], from_stub[1]);
  }
  ::close(to_stub[0]);
  ::close(from_stub[1]);
  write_file(dir / "token", "tok");
  ::chmod((dir / "token").c_str(), 0600);
  std::string hosts = "hosts:\n";
  for (int i = 0; i < n; ++i) {
    int port = 0;
    read_exact(from_stub[0], &port, sizeof port);
    hosts += "  - name: vm" + std::to_string(i) + "\n    url: http://127.0.0.1:" + std::to_string(port) +
             "\n    token_file: " + (dir / "token").string() + "\n    accelerator: kvm\n";
  }
  write_file(dir / "hosts.yaml", hosts);
  write_file(dir / "fleet.yaml", campaign_yaml(n, (cases + 2) / 3));
  const hc::Campaign c = hc::load_campaign((dir / "fleet.yaml").string());
  hc::RunOptions o;
  o.db_path = (dir / "fleet.db").string();
  o.hosts_file = (dir / "hosts.yaml").string();
  o.progress_tty = 0;
  std::FILE* log = std::fopen((dir / "runner.log").c_str(), "w");
  o.out = log;
  rusage r0{}, r1{};
  ::getrusage(RUSAGE_SELF, &r0);
  const std::int64_t t0 = now_ns();
  const hc::RunSummary sum = hc::run_campaign(c, o);
  const std::int64_t t1 = now_ns();
  ::getrusage(RUSAGE_SELF, &r1);
  std::fclose(log);
  ::close(to_stub[1]);
  std::int64_t stub[2] = {0, 0};
  read_exact(from_stub[0], stub, sizeof stub);
  ::close(from_stub[0]);
  int wst = 0;
  ::waitpid(pid, &wst, 0);
  if (sum.completed != sum.planned)
    throw std::runtime_error(std::to_string(n) + " hosts: " + std::to_string(sum.completed) + " of " +
                             std::to_string(sum.planned) + " cases completed (log: " + (dir / "runner.log").string() +
                             ")");
  Result res;
  res.hosts = n;
  res.cases = sum.planned;
  res.wall_s = (t1 - t0) / 1e9;
  res.runner_cpu_ms = (cpu_s(r1) - cpu_s(r0)) * 1e3 / sum.planned;
  res.wall_ms = res.wall_s * 1e3 * n / sum.planned;
  res.stub_ms = stub[0] ? stub[1] / 1e6 / stub[0] : 0;
  std::uintmax_t bytes = 0;
  for (const char* sfx : {"", "-wal"}) {
    std::error_code ec;
    const auto b = fs::file_size(o.db_path + sfx, ec);
    if (!ec) bytes += b;
  }
  res.db_bytes = static_cast<double>(bytes) / sum.planned;
  res.db = o.db_path;
  return res;
}

/// Import time per bundle into the campaign DB `db` (already holding a fleet's cases): k
/// study-sized bundles, each holding the case under its agent id, imported with its attempts
/// row under the scheduled id one at a time (what a worker does after the download), side by
/// side with the peer: the way before 2026-12-02, the bundle rewritten to the scheduled id
/// first (one UPDATE per table, reproduced here as `rewrite_case_id`) and then imported.
/// The two alternate bundle by bundle, k of each. Per bundle, ms.
struct ImportTimes {
  double import_wall = 0, import_cpu = 0;    ///< import_attempt under the scheduled id (the harness's way)
  double rewrite_wall = 0, rewrite_cpu = 0;  ///< the peer: rewrite, then import
};
double thread_cpu_ms() {
  rusage r{};
  ::getrusage(RUSAGE_THREAD, &r);
  return cpu_s(r) * 1e3;
}
void rewrite_case_id(const std::string& bundle, const std::string& from, const std::string& to) {
  results::Db b(bundle, results::Db::Mode::ReadWrite);
  b.exec("PRAGMA foreign_keys = OFF");
  b.transaction([&] {
    // canary_requests, telemetry and controller_events hold the case key since schema version
    // 5, not the id: renaming the case in cases renames it for them.
    for (const char* t : {"cases", "phases", "reclaim_actions", "restoration", "artifacts"}) {
      results::Stmt u(b, std::string("UPDATE ") + t + " SET case_id = ?2 WHERE case_id = ?1");
      u.bind(1, from).bind(2, to);
      u.run();
    }
  });
}
ImportTimes time_imports(const fs::path& db_path, int k, const Size& z, const fs::path& dir) {
  results::Db db(db_path.string(), results::Db::Mode::ReadWrite);
  ImportTimes t;
  for (int i = 0; i < 2 * k; ++i) {
    const bool peer = i % 2 == 1;
    // Ids of a fleet case's length and shape (scheduled id ~48 characters, agent id
    // "<id>.a1-<8 hex>"), in the middle of the DB's key order as a fleet's next case is: the
    // case id is stored in every row and every primary-key index, so a short id ("imp-N",
    // before 2026-12-03) understated the import.
    const std::string id = "fleet-vm0-fast-structured-r" + std::to_string(100'000 + i) + "-bounded-reclaim";
    const std::string agent_id = id + ".a1-0123abcd";
    const nlohmann::json spec = {{"case_id", agent_id}, {"campaign", "fleet"}, {"vm", "vm0"},
                                 {"regime", "fast-structured"}, {"repeat", 1}, {"configuration", "bounded-reclaim"},
                                 {"dose_bytes", 96LL << 20}};
    const std::string bundle = (dir / (agent_id + ".db")).string();
    harness::case_::write_bundle(bundle, study_bundle(spec, z));
    {
      results::Stmt s(db, "INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, configuration, state) "
                          "VALUES (?1, ?2, 'vm0', 'fast-structured', 1, 'bounded-reclaim', 'pending')");
      s.bind(1, id).bind(2, std::int64_t{10'000'000} + i);
      s.run();
    }
    hc::AttemptRecord a;
    a.case_id = id;
    a.host = "vm0";
    a.started_unix_ns = 1;
    hc::begin_attempt(db, a);
    const std::int64_t w1 = now_ns();
    const double c1 = thread_cpu_ms();
    // The bundle holds the case under its agent case id, as an agent's does.
    std::string status;
    if (peer) {
      rewrite_case_id(bundle, agent_id, id);
      status = hc::import_attempt(db, bundle, a, hc::RanOn{"kvm", "", std::nullopt});
    } else {
      status = hc::import_attempt(db, bundle, a, hc::RanOn{"kvm", "", std::nullopt}, agent_id);
    }
    if (status != "completed") throw std::runtime_error(bundle + ": not imported as completed");
    (peer ? t.rewrite_wall : t.import_wall) += (now_ns() - w1) / 1e6 / k;
    (peer ? t.rewrite_cpu : t.import_cpu) += (thread_cpu_ms() - c1) / k;
    fs::remove(bundle);
  }
  return t;
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) v.push_back(std::stoi(x));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fleet_bench: the campaign runner against N stub agents on 127.0.0.1"};
  std::string hosts_list = "1,9,50,200", keep;
  int cases = 1002, imports = 50;
  Size z;
  app.add_option("--hosts", hosts_list, "fleet sizes, comma-separated");
  app.add_option("--cases", cases, "cases per fleet (rounded up to whole triplets)");
  app.add_option("--requests", z.requests, "canary requests per canary per case");
  app.add_option("--seconds", z.seconds, "telemetry samples (1 Hz) per case");
  app.add_option("--imports", imports, "bundles imported one at a time for the import figure");
  app.add_option("--keep", keep, "work directory to keep (default: a temporary one, removed)");
  CLI11_PARSE(app, argc, argv);
  const fs::path work = keep.empty() ? fs::temp_directory_path() / ("fleet-bench-" + std::to_string(::getpid()))
                                     : fs::path(keep);
  try {
    std::printf("fleet bench: %d cases per fleet, bundles of 2 x %d canary requests + %d telemetry samples "
                "(nproc %ld)\n",
                cases, z.requests, z.seconds, ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("%6s %6s %9s %12s %12s %12s %14s %12s\n", "hosts", "cases", "wall s", "runner CPU", "wall/case",
                "stub/case", "beyond stub", "DB/case");
    std::printf("%6s %6s %9s %12s %12s %12s %14s %12s\n", "", "", "", "ms/case", "ms (x hosts)", "ms", "ms", "KiB");
    std::vector<Result> rs;
    for (int n : parse_list(hosts_list)) {
      const Result r = run_fleet(n, cases, z, work / ("n" + std::to_string(n)));
      std::printf("%6d %6d %9.2f %12.2f %12.2f %12.2f %14.2f %12.1f\n", r.hosts, r.cases, r.wall_s, r.runner_cpu_ms,
                  r.wall_ms, r.stub_ms, r.wall_ms - r.stub_ms, r.db_bytes / 1024);
      std::fflush(stdout);
      rs.push_back(r);
      if (rs.size() > 1) fs::remove_all(rs[rs.size() - 2].db.parent_path());  // keep the last DB only
    }
    const ImportTimes imp = time_imports(rs.back().db, imports, z, work);
    std::printf("import per bundle (%d + %d bundles one at a time, alternating, into the %d-host DB):\n"
                "  under the scheduled id (harness): %.2f ms wall, %.2f ms CPU\n"
                "  rewrite, then import (peer):      %.2f ms wall, %.2f ms CPU\n"
                "  ratio harness / peer: wall x%.2f, CPU x%.2f\n",
                imports, imports, rs.back().hosts, imp.import_wall, imp.import_cpu, imp.rewrite_wall, imp.rewrite_cpu,
                imp.import_wall / imp.rewrite_wall, imp.import_cpu / imp.rewrite_cpu);
    std::printf("curve over hosts (each over the first row): ");
    for (const auto& r : rs)
      std::printf(" N=%d: CPU/case x%.2f, wall/case beyond stub x%.2f;", r.hosts, r.runner_cpu_ms / rs[0].runner_cpu_ms,
                  (r.wall_ms - r.stub_ms) / (rs[0].wall_ms - rs[0].stub_ms));
    std::printf("\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleet_bench: %s\n", e.what());
    if (keep.empty()) fs::remove_all(work);
    return 1;
  }
  if (keep.empty()) fs::remove_all(work);
  return 0;
}
