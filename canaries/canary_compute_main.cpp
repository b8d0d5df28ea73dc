// canary-compute: the compute canary (study; work defined in canaries/hot_region.hpp).
//   canary-compute --period-ms 100 --duration-s S --hot-mib 16 --trace FILE
//                  [--start-at-ns T] [--seed N]
// Prints one JSON summary line on stdout (canaries/canary_runner.hpp); exit 0 on a normal
// end or SIGTERM/SIGINT, 1 on a run error, 2 on bad arguments (message names the flag).
#include "canaries/canary_runner.hpp"
#include "canaries/cli_main.hpp"
#include "canaries/hot_region.hpp"
#include "canaries/stop_signal.hpp"

int main(int argc, char** argv) {
  CLI::App app{"canary-compute: periodic requests touching a hot memory region (reclaim-ablation harness)"};
  canaries::CanaryOptions opts;
  std::int64_t hot_mib = 16;
  canaries::add_run_options(app, opts);
  app.add_option("--hot-mib", hot_mib, "hot region, MiB, touched by every request")->capture_default_str();
  if (const auto rc = canaries::parse_flags(app, argc, argv)) return *rc;
  return canaries::run_main("canary-compute", [&] {
    if (hot_mib < 1 || hot_mib > 65536) {
      throw std::invalid_argument("--hot-mib " + std::to_string(hot_mib) + " must be in [1, 65536]");
    }
    canaries::make_schedule(opts, 0);   // flag checks before allocating anything
    canaries::install_stop_handlers();  // before the region is filled: an early SIGTERM still ends cleanly
    canaries::HotRegion region(static_cast<std::size_t>(hot_mib) << 20, opts.seed);
    std::uint64_t digest = 0;
    return canaries::run_canary(
        "compute", opts, [&](std::uint64_t seq) { digest ^= region.request(seq); },
        [&](nlohmann::json& j) {
          j["hot_mib"] = hot_mib;
          j["seed"] = opts.seed;
          j["digest"] = digest;  // xor of request accumulators: same seed + requests -> same digest
        });
  });
}
