// `harness calibrate run|report`: static-zram calibration cases over a small grid of
// pressure shapes, compared with the study's medians (harness/calibrate/).
//
//   harness calibrate run --out DIR [--hosts FILE [--host NAME]] [--allocation-mib 320,360]
//       [--active-set-mib 128] [--slide-mib-s 0.25,0.5] [--bg-max-mib 300] [--rate-mib-s 16]
//       [--pressure-s 120]
//   harness calibrate report DIR
// `run` writes DIR/grid.json and runs every case one after the other: without --hosts in
// one fresh local guest (DIR/script.sh through `harness vm exec`; each case cleans up the
// previous one's leftovers), with --hosts through the agent of one VM of a hosts file
// (harness/vm/HOSTS.md; default its first entry), so the episode is measured on the CPU the
// study's VMs give the pressure generator. Bundles land in DIR/collect/bundles/calib-<point>.db
// (a rerun with --hosts skips the points whose bundle is there); then the table is printed
// (also DIR/table.md).
#include <cstdio>
#include "harness/json/limited_parse.hpp"
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/calibrate/choose.hpp"
#include "harness/calibrate/grid.hpp"
#include "harness/calibrate/measure.hpp"
#include "harness/calibrate/remote.hpp"
#include "harness/pool/agent_wait.hpp"
#include "harness/pool/hosts/hosts_file.hpp"
#include "harness/vm/exec.hpp"
#include "harness/cli/validators.hpp"
#include "registry.hpp"

namespace {

namespace fs = std::filesystem;

struct CalibArgs {
  std::string out, cache, hosts, host;
  std::vector<std::int64_t> allocation{320, 360}, active{128}, bg_max{300};
  std::vector<double> slide{0.25, 0.5};
  harness::calibrate::GridOptions grid;
};

int report(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "grid.json");
  if (!in) {
    std::fprintf(stderr, "harness calibrate: %s/grid.json missing (run `harness calibrate run` first)\n", dir.c_str());
    return 2;
  }
  auto g = harness::json::parse_file((fs::path(dir) / "grid.json").string());
  std::vector<harness::calibrate::Point> points;
  std::vector<harness::calibrate::Measured> ms;
  for (const auto& p : g["points"]) {
    harness::calibrate::Point pt{p["allocation_mib"], p["active_set_mib"], p["slide_mib_s"], p["bg_max_mib"]};
    const auto db = fs::path(dir) / "collect" / "bundles" / ("calib-" + pt.name() + ".db");
    harness::calibrate::Measured m;
    if (fs::exists(db)) {
      try {
        m = harness::calibrate::measure_bundle(db.string());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "harness calibrate: %s: %s\n", db.c_str(), e.what());
      }
    } else {
      m.status = "missing";
    }
    points.push_back(pt);
    ms.push_back(m);
  }
  std::string t = harness::calibrate::table(points, ms);
  if (auto best = harness::calibrate::choose(ms))
    t += fmt::format("\nChosen: allocation {} MiB, active set {} MiB, slide {} MiB/s, bg memory.max {} MiB.\n",
                     points[*best].allocation_mib, points[*best].active_set_mib, points[*best].slide_mib_s,
                     points[*best].bg_max_mib);
  else
    t += "\nNo point has both measurements: nothing chosen.\n";
  std::ofstream(fs::path(dir) / "table.md") << t;
  std::printf("%s", t.c_str());
  return 0;
}

/// `calibrate run --hosts`: the grid's cases through the agent of one VM of the hosts file,
/// then the table. Exit 2 for a hosts file or host name that does not work, 1 when a case
/// failed (its row reads "missing"), else report()'s.
int run_on_host(const CalibArgs& a, const std::vector<harness::calibrate::Point>& points, nlohmann::json g,
                std::int64_t per_case_s) {
  namespace hosts = harness::pool::hosts;
  std::vector<hosts::HostEntry> entries;
  try {
    entries = hosts::load_hosts(a.hosts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness calibrate: %s\n", e.what());
    return 2;
  }
  const hosts::HostEntry* entry = nullptr;
  for (const auto& e : entries)
    if (a.host.empty() || e.name == a.host) {
      entry = &e;
      break;
    }
  if (!entry) {
    std::fprintf(stderr, "harness calibrate: %s: %s\n", a.hosts.c_str(),
                 a.host.empty() ? "no host listed" : ("no host named '" + a.host + "'").c_str());
    return 2;
  }
  const auto guest = hosts::guest_of(*entry);
  g["ran_on"] = {{"hosts_file", fs::absolute(a.hosts).string()}, {"host", guest.name}, {"url", guest.url},
                 {"accelerator_listed", guest.accelerator}};
  std::ofstream(fs::path(a.out) / "grid.json") << g.dump(2) << "\n";
  const std::string grid_key = g.dump() + "\n" + fs::absolute(a.out).lexically_normal().string();
  std::vector<harness::calibrate::RemoteCase> cases;
  for (const auto& p : points) {
    auto spec = harness::calibrate::spec_for(p, a.grid);
    spec["case_id"] = harness::calibrate::run_case_id(p.name(), grid_key);
    cases.push_back({spec["case_id"].get<std::string>(), spec, "calib-" + p.name() + ".db"});
  }
  harness::calibrate::RemoteOptions o;
  o.case_timeout = std::chrono::seconds(per_case_s + 600);
  std::fprintf(stderr, "harness calibrate: %zu cases on %s (%s), one after the other\n", cases.size(),
               guest.name.c_str(), guest.url.c_str());
  std::vector<harness::calibrate::RemoteResult> results;
  try {
    auto client = harness::agent::AgentClient::from_token_file(guest.url, guest.token_file,
                                                               harness::pool::client_options(guest));
    results = harness::calibrate::run_through_agent(client, cases, (fs::path(a.out) / "collect" / "bundles").string(), o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness calibrate: %s: %s\n", guest.name.c_str(), e.what());
    return 2;
  }
  int failed = 0;
  for (const auto& r : results) failed += r.result == "failed";
  const int rc = report(a.out);
  if (failed > 0) {
    std::fprintf(stderr, "harness calibrate: %d of %zu cases failed (above); rerun the same command to retry them\n",
                 failed, results.size());
    return rc == 0 ? 1 : rc;
  }
  return rc;
}

/// `calibrate run` without --hosts: DIR/script.sh runs every case in one fresh local guest
/// (`harness vm exec`), then the table. Returns report()'s exit code.
int run_in_local_guest(const CalibArgs& a, const std::vector<harness::calibrate::Point>& points,
                       const nlohmann::json& g, std::int64_t per_case) {
  std::ofstream sc(fs::path(a.out) / "script.sh");
  sc << "set -x\nmkdir -p /out/bundles\n";
  for (const auto& p : points) {
    const std::string id = "calib-" + p.name();
    sc << "cat > /out/" << id << ".json <<'EOF'\n" << harness::calibrate::spec_for(p, a.grid).dump(2) << "\nEOF\n";
    sc << "harness case run --spec /out/" << id << ".json --out /out/bundles --min-free-disk-mib 64 > /out/" << id
       << ".stdout 2> /out/" << id << ".stderr; echo $? > /out/" << id << ".rc\n";
    sc << "rm -rf /out/bundles/" << id << ".work\n";
  }
  sc.close();
  std::ofstream(fs::path(a.out) / "grid.json") << g.dump(2) << "\n";
  harness::vm::ExecOptions e;
  e.cache_dir = a.cache;
  e.script = (fs::path(a.out) / "script.sh").string();
  e.collect_dir = (fs::path(a.out) / "collect").string();
  e.timeout_s = static_cast<int>(180 + per_case * static_cast<std::int64_t>(points.size()));
  std::fprintf(stderr, "harness calibrate: %zu cases, budget %d s\n", points.size(), e.timeout_s);
  auto r = harness::vm::exec_once(e);
  std::fprintf(stderr, "harness calibrate: guest %s, script status %d%s, %.0f s\n", r.accelerator.c_str(),
               r.script_status, r.timed_out ? " (timed out)" : "", r.seconds);
  return report(a.out);
}

/// `calibrate run`: the grid (exit 2 when empty), DIR/grid.json's options and points, then the
/// cases on a VM of the hosts file (run_on_host) or in a local guest (run_in_local_guest).
int run_grid(const CalibArgs& a) {
  const auto points = harness::calibrate::make_grid(a.allocation, a.active, a.slide, a.bg_max);
  if (points.empty()) {
    std::fprintf(stderr, "harness calibrate: empty grid (allocation must exceed bg max)\n");
    return 2;
  }
  fs::create_directories(fs::path(a.out) / "collect");
  nlohmann::json g{{"options",
                    {{"rate_mib_s", a.grid.rate_mib_s},
                     {"contents", a.grid.contents},
                     {"phases_s", {a.grid.warmup_s, a.grid.pressure_s, a.grid.recovery_s}}}},
                   {"points", nlohmann::json::array()}};
  for (const auto& p : points)
    g["points"].push_back({{"allocation_mib", p.allocation_mib},
                           {"active_set_mib", p.active_set_mib},
                           {"slide_mib_s", p.slide_mib_s},
                           {"bg_max_mib", p.bg_max_mib}});
  const std::int64_t per_case = a.grid.warmup_s + a.grid.pressure_s + a.grid.recovery_s + 90;
  if (!a.hosts.empty()) return run_on_host(a, points, g, per_case);
  return run_in_local_guest(a, points, g, per_case);
}

const bool kCalibrateRegistered = harness::cli::register_commands("calibrate", [](CLI::App& app) {
  auto* c = app.add_subcommand("calibrate", "static-zram calibration of the pressure episode against the study's medians");
  c->require_subcommand(1);
  auto a = std::make_shared<CalibArgs>();
  auto* run = c->add_subcommand("run", "run the grid in one local guest (TCG when no /dev/kvm), or on a VM of a hosts "
                                       "file through its agent, and print the table");
  run->add_option("--out", a->out, "output directory (grid.json, script.sh, collect/, table.md)")->required();
  auto* cache = run->add_option("--cache", a->cache, "`harness vm --cache` (default ~/.cache/reclaim-harness)");
  auto* hosts = run->add_option("--hosts", a->hosts,
                                "hosts file (harness/vm/HOSTS.md): run the cases through the agent of one of its VMs "
                                "instead of a local guest")
                    ->check(CLI::ExistingFile)
                    ->excludes(cache);
  run->add_option("--host", a->host, "with --hosts: the VM's name in the hosts file (default: its first entry)")
      ->needs(hosts);
  const auto mib = harness::cli::integer_in(1, 1 << 20);
  run->add_option("--allocation-mib", a->allocation, "allocations, MiB (comma list)")->delimiter(',')->capture_default_str()->check(mib);
  run->add_option("--active-set-mib", a->active, "active sets, MiB (comma list)")->delimiter(',')->capture_default_str()->check(mib);
  run->add_option("--slide-mib-s", a->slide, "active-window slide speeds, MiB/s (comma list)")->delimiter(',')->capture_default_str()
      ->check(harness::cli::positive_number());
  run->add_option("--bg-max-mib", a->bg_max, "bg memory.max values, MiB (comma list)")->delimiter(',')->capture_default_str()->check(mib);
  run->add_option("--rate-mib-s", a->grid.rate_mib_s, "allocation rate, MiB/s")->capture_default_str()
      ->check(harness::cli::positive_number());
  run->add_option("--contents", a->grid.contents, "structured | random")->capture_default_str()
      ->check(CLI::IsMember({"structured", "random"}));
  run->add_option("--warmup-s", a->grid.warmup_s, "warmup phase, s")->capture_default_str()
      ->check(harness::cli::integer_in(0, 86400));
  run->add_option("--pressure-s", a->grid.pressure_s, "pressure phase, s (study: 300; shorter ones are projected)")
      ->capture_default_str()->check(harness::cli::integer_in(1, 86400));
  run->add_option("--recovery-s", a->grid.recovery_s, "recovery phase, s")->capture_default_str()
      ->check(harness::cli::integer_in(0, 86400));
  run->callback([a] { harness::cli::exit_code() = run_grid(*a); });
  auto* rep = c->add_subcommand("report", "print the table of a finished `calibrate run` directory");
  auto dir = std::make_shared<std::string>();
  rep->add_option("dir", *dir, "the --out directory of `calibrate run`")->required();
  rep->callback([dir] { harness::cli::exit_code() = report(*dir); });
});

}  // namespace
