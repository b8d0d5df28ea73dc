// `harness calibrate run|report`: static-zram calibration cases on a local guest over a
// small grid of pressure shapes, compared with the study's medians (harness/calibrate/).
//
//   harness calibrate run --out DIR [--allocation-mib 320,360] [--active-set-mib 128]
//       [--slide-mib-s 0.25,0.5] [--bg-max-mib 300] [--rate-mib-s 16] [--pressure-s 120]
//   harness calibrate report DIR
// `run` writes DIR/grid.json and DIR/script.sh, runs every case one after the other in
// one fresh guest (`harness vm exec`; each case cleans up the previous one's leftovers),
// collects DIR/collect/bundles/calib-<point>.db and prints the table (also DIR/table.md).
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
#include "harness/vm/exec.hpp"
#include "harness/cli/validators.hpp"
#include "registry.hpp"

namespace {

namespace fs = std::filesystem;

struct CalibArgs {
  std::string out, cache;
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

const bool kRegistered = harness::cli::register_commands("calibrate", [](CLI::App& app) {
  auto* c = app.add_subcommand("calibrate", "static-zram calibration of the pressure episode against the study's medians");
  c->require_subcommand(1);
  auto a = std::make_shared<CalibArgs>();
  auto* run = c->add_subcommand("run", "run the grid in one local guest (TCG when no /dev/kvm) and print the table");
  run->add_option("--out", a->out, "output directory (grid.json, script.sh, collect/, table.md)")->required();
  run->add_option("--cache", a->cache, "`harness vm --cache` (default ~/.cache/reclaim-harness)");
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
  run->callback([a] {
    const auto points = harness::calibrate::make_grid(a->allocation, a->active, a->slide, a->bg_max);
    if (points.empty()) {
      std::fprintf(stderr, "harness calibrate: empty grid (allocation must exceed bg max)\n");
      harness::cli::exit_code() = 2;
      return;
    }
    fs::create_directories(fs::path(a->out) / "collect");
    nlohmann::json g{{"options",
                      {{"rate_mib_s", a->grid.rate_mib_s},
                       {"contents", a->grid.contents},
                       {"phases_s", {a->grid.warmup_s, a->grid.pressure_s, a->grid.recovery_s}}}},
                     {"points", nlohmann::json::array()}};
    std::ofstream sc(fs::path(a->out) / "script.sh");
    sc << "set -x\nmkdir -p /out/bundles\n";
    for (const auto& p : points) {
      g["points"].push_back({{"allocation_mib", p.allocation_mib},
                             {"active_set_mib", p.active_set_mib},
                             {"slide_mib_s", p.slide_mib_s},
                             {"bg_max_mib", p.bg_max_mib}});
      const std::string id = "calib-" + p.name();
      sc << "cat > /out/" << id << ".json <<'EOF'\n" << harness::calibrate::spec_for(p, a->grid).dump(2) << "\nEOF\n";
      sc << "harness case run --spec /out/" << id << ".json --out /out/bundles --min-free-disk-mib 64 > /out/" << id
         << ".stdout 2> /out/" << id << ".stderr; echo $? > /out/" << id << ".rc\n";
      sc << "rm -rf /out/bundles/" << id << ".work\n";
    }
    sc.close();
    std::ofstream(fs::path(a->out) / "grid.json") << g.dump(2) << "\n";
    harness::vm::ExecOptions e;
    e.cache_dir = a->cache;
    e.script = (fs::path(a->out) / "script.sh").string();
    e.collect_dir = (fs::path(a->out) / "collect").string();
    const std::int64_t per_case = a->grid.warmup_s + a->grid.pressure_s + a->grid.recovery_s + 90;
    e.timeout_s = static_cast<int>(180 + per_case * static_cast<std::int64_t>(points.size()));
    std::fprintf(stderr, "harness calibrate: %zu cases, budget %d s\n", points.size(), e.timeout_s);
    auto r = harness::vm::exec_once(e);
    std::fprintf(stderr, "harness calibrate: guest %s, script status %d%s, %.0f s\n", r.accelerator.c_str(),
                 r.script_status, r.timed_out ? " (timed out)" : "", r.seconds);
    harness::cli::exit_code() = report(a->out);
  });
  auto* rep = c->add_subcommand("report", "print the table of a finished `calibrate run` directory");
  auto dir = std::make_shared<std::string>();
  rep->add_option("dir", *dir, "the --out directory of `calibrate run`")->required();
  rep->callback([dir] { harness::cli::exit_code() = report(*dir); });
});

}  // namespace
