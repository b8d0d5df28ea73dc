#include "pressure/options.hpp"

#include <stdexcept>

namespace pressure {

void add_options(CLI::App& app, Options& o) {
  app.add_option("--allocation-mib", o.allocation_mib, "total allocation, MiB (study: larger than the bg limit)");
  app.add_option("--rate-mib-s", o.rate_mib_s, "target allocation rate, MiB/s (absolute schedule)");
  app.add_option("--active-set-mib", o.active_set_mib,
                 "active set, MiB: the first A MiB of the allocation, re-touched continuously");
  app.add_option("--contents", o.contents, "page contents: structured (~3:1) | random (incompressible)");
  app.add_option_function<std::uint64_t>(
      "--seed", [&o](const std::uint64_t& v) { o.seed = v, o.seed_given = true; }, "page-content seed");
  app.add_option("--active-set-slide-mib-s", o.active_set_slide_mib_s,
                 "speed at which the active window moves through the allocation, MiB/s (0 = the first A MiB)")
      ->capture_default_str();
  app.add_option("--chunk-mib", o.chunk_mib, "allocation chunk, MiB")->capture_default_str();
  app.add_option("--duration-s", o.duration_s, "run length, s (default: until SIGTERM/SIGINT)");
  app.add_option("--dump-sample", o.dump_sample, "write --sample-mib of generated page contents to FILE and exit");
  app.add_option("--sample-mib", o.sample_mib, "size of --dump-sample, MiB")->capture_default_str();
}

void validate(Options& o) {
  if (o.contents.empty()) throw std::invalid_argument("--contents is required (structured or random)");
  parse_contents(o.contents);
  if (!o.seed_given) throw std::invalid_argument("--seed is required");
  if (!o.dump_sample.empty()) {
    if (o.sample_mib < 1 || o.sample_mib > 65536) {
      throw std::invalid_argument("--sample-mib " + std::to_string(o.sample_mib) + " must be in [1, 65536]");
    }
    return;
  }
  if (o.allocation_mib == 0) throw std::invalid_argument("--allocation-mib is required");
  if (o.allocation_mib < 1 || o.allocation_mib > 1'048'576) {
    throw std::invalid_argument("--allocation-mib " + std::to_string(o.allocation_mib) + " must be in [1, 1048576]");
  }
  if (o.rate_mib_s == 0) throw std::invalid_argument("--rate-mib-s is required");
  if (!(o.rate_mib_s > 0 && o.rate_mib_s <= 100'000)) {
    throw std::invalid_argument("--rate-mib-s " + std::to_string(o.rate_mib_s) + " must be in (0, 100000]");
  }
  if (o.active_set_mib == -1) throw std::invalid_argument("--active-set-mib is required");
  if (o.active_set_mib < 0 || o.active_set_mib > o.allocation_mib) {
    throw std::invalid_argument("--active-set-mib " + std::to_string(o.active_set_mib) +
                                " must be in [0, --allocation-mib " + std::to_string(o.allocation_mib) + "]");
  }
  if (o.chunk_mib < 1 || o.chunk_mib > o.allocation_mib) {
    throw std::invalid_argument("--chunk-mib " + std::to_string(o.chunk_mib) + " must be in [1, --allocation-mib " +
                                std::to_string(o.allocation_mib) + "]");
  }
  if (!(o.active_set_slide_mib_s >= 0 && o.active_set_slide_mib_s <= 100'000)) {
    throw std::invalid_argument("--active-set-slide-mib-s " + std::to_string(o.active_set_slide_mib_s) +
                                " must be in [0, 100000]");
  }
  if (o.duration_s && !(*o.duration_s > 0 && *o.duration_s <= 30.0 * 86400)) {
    throw std::invalid_argument("--duration-s " + std::to_string(*o.duration_s) + " must be in (0, 2592000]");
  }
}

}  // namespace pressure
