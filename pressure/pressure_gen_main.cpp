// pressure-gen: allocation at a set rate with active-set re-touching (docs/DESIGN.md "The case").
// Flags: pressure/options.hpp. Behaviour: pressure/generator.hpp, contents:
// pressure/page_contents.hpp. On exit (duration over, SIGTERM or SIGINT, also in the
// middle of the allocation) prints one JSON report line on stdout and exits 0:
// {"allocated_mib", "allocation_mib", "allocation_complete", "rate_mib_s",
//  "achieved_rate_mib_s" (allocated / allocation_elapsed_s), "allocation_elapsed_s",
//  "elapsed_s", "chunks", "chunk_mib", "max_chunk_lag_ms", "active_set_mib", "active_set_slide_mib_s",
//  "window_start_mib" (active window start at the end), "touch_passes"
//  (complete passes over the active set as it was then: during the allocation it is the
//  allocated prefix, so early passes are short; see generator.hpp), "touched_pages", "minflt", "majflt" (getrusage RUSAGE_SELF: the process's own faults),
//  "cpu_user_s", "cpu_sys_s" (its CPU time: tells a CPU-bound allocation from a waiting one),
//  "contents", "seed", "stopped_by" ("duration" | "SIGTERM" | "SIGINT")}.
// Exit 2 on bad arguments (message names the flag), 1 on a run error.
#include "canaries/cli_main.hpp"
#include "canaries/clock.hpp"
#include "canaries/stop_signal.hpp"
#include "pressure/generator.hpp"
#include "pressure/options.hpp"
#include "pressure/pacing.hpp"

#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <vector>

namespace {

int dump_sample(const pressure::Options& o) {
  std::ofstream out(o.dump_sample, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::cerr << "pressure-gen: --dump-sample " << o.dump_sample << ": cannot create: " << std::strerror(errno)
              << std::endl;
    return 1;
  }
  pressure::PageGenerator gen(pressure::parse_contents(o.contents), o.seed);
  std::vector<unsigned char> page(pressure::kPageBytes);
  const std::uint64_t pages = static_cast<std::uint64_t>(o.sample_mib) * (1 << 20) / pressure::kPageBytes;
  for (std::uint64_t i = 0; i < pages; ++i) {
    gen.fill(page.data());
    out.write(reinterpret_cast<const char*>(page.data()), static_cast<std::streamsize>(page.size()));
  }
  out.close();
  if (!out) {
    std::cerr << "pressure-gen: --dump-sample " << o.dump_sample << ": write failed" << std::endl;
    return 1;
  }
  std::cout << nlohmann::json{{"dump_sample", o.dump_sample}, {"sample_mib", o.sample_mib},
                              {"contents", o.contents}, {"seed", o.seed}}
                   .dump()
            << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pressure-gen: paced anonymous-memory allocation with active-set re-touching"};
  pressure::Options o;
  pressure::add_options(app, o);
  if (const auto rc = canaries::parse_flags(app, argc, argv)) return *rc;
  try {
    pressure::validate(o);
  } catch (const std::invalid_argument& e) {
    std::cerr << "pressure-gen: " << e.what() << std::endl;
    return 2;
  }
  if (!o.dump_sample.empty()) return dump_sample(o);

  try {
    canaries::install_stop_handlers();
    pressure::GeneratorConfig cfg;
    cfg.allocation_bytes = static_cast<std::uint64_t>(o.allocation_mib) << 20;
    cfg.active_set_bytes = static_cast<std::uint64_t>(o.active_set_mib) << 20;
    cfg.chunk_bytes = static_cast<std::uint64_t>(o.chunk_mib) << 20;
    cfg.rate_bytes_per_s = o.rate_mib_s * 1048576.0;
    cfg.active_slide_bytes_per_s = o.active_set_slide_mib_s * 1048576.0;
    cfg.contents = pressure::parse_contents(o.contents);
    cfg.seed = o.seed;
    if (o.duration_s) cfg.duration_ns = static_cast<std::int64_t>(*o.duration_s * 1e9);
    canaries::MonotonicClock clock;
    const pressure::GeneratorResult r = pressure::run_generator(cfg, clock, [] { return canaries::stop_requested(); });
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const int sig = canaries::stop_signal();
    nlohmann::json j;
    j["allocation_mib"] = o.allocation_mib;
    j["allocated_mib"] = static_cast<double>(r.allocated_bytes) / 1048576.0;
    j["allocation_complete"] = r.allocation_complete;
    j["rate_mib_s"] = o.rate_mib_s;
    j["achieved_rate_mib_s"] = pressure::achieved_rate_mib_s(r.allocated_bytes, r.allocation_elapsed_ns);
    j["allocation_elapsed_s"] = static_cast<double>(r.allocation_elapsed_ns) / 1e9;
    j["elapsed_s"] = static_cast<double>(r.elapsed_ns) / 1e9;
    j["chunks"] = r.chunks;
    j["chunk_mib"] = o.chunk_mib;
    j["max_chunk_lag_ms"] = static_cast<double>(r.max_chunk_lag_ns) / 1e6;
    j["active_set_mib"] = o.active_set_mib;
    j["active_set_slide_mib_s"] = o.active_set_slide_mib_s;
    j["window_start_mib"] = static_cast<double>(r.window_start_page) * pressure::kPageBytes / 1048576.0;
    j["touch_passes"] = r.touch_passes;
    j["touched_pages"] = r.touched_pages;
    j["minflt"] = ru.ru_minflt;
    j["majflt"] = ru.ru_majflt;
    j["cpu_user_s"] = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6;
    j["cpu_sys_s"] = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
    j["contents"] = o.contents;
    j["seed"] = o.seed;
    j["stopped_by"] = r.stopped ? (sig == SIGINT ? "SIGINT" : "SIGTERM") : "duration";
    std::cout << j.dump() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "pressure-gen: " << e.what() << std::endl;
    return 1;
  }
}
