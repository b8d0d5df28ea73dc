// Workload command lines from the case spec.
#include "harness/case/spec/workloads.hpp"

#include <fmt/format.h>

#include "harness/kernel/size.hpp"

namespace harness::case_ {

namespace {
using harness::kernel::kMiB;
}

Workloads::Workloads(const CaseSpec& spec, std::string bin_dir, std::string work_dir)
    : spec_(spec), bin_dir_(std::move(bin_dir)), work_dir_(std::move(work_dir)) {}

std::vector<std::string> Workloads::pressure_gen(std::int64_t duration_s) const {
  const auto& p = spec_.pressure;
  return {bin_dir_ + "/pressure-gen",
          "--allocation-mib", std::to_string(p.allocation_bytes / kMiB),
          "--rate-mib-s", fmt::format("{}", p.rate_mib_s),
          "--active-set-mib", std::to_string(p.active_set_bytes / kMiB),
          "--active-set-slide-mib-s", fmt::format("{}", p.active_set_slide_mib_s),
          "--contents", p.contents,
          "--seed", std::to_string(p.seed),
          "--duration-s", std::to_string(duration_s)};
}

std::vector<std::string> Workloads::canary_compute(std::int64_t start_at_ns, std::int64_t duration_s) const {
  const auto& c = spec_.canaries;
  return {bin_dir_ + "/canary-compute",
          "--period-ms", std::to_string(c.period_ms),
          "--duration-s", std::to_string(duration_s),
          "--hot-mib", std::to_string(c.compute_hot_bytes / kMiB),
          "--trace", work_dir_ + "/canary-compute.trace",
          "--start-at-ns", std::to_string(start_at_ns),
          "--seed", std::to_string(c.seed)};
}

std::vector<std::string> Workloads::canary_sqlite(std::int64_t start_at_ns, std::int64_t duration_s) const {
  const auto& c = spec_.canaries;
  return {bin_dir_ + "/canary-sqlite", "run",
          "--db", c.sqlite_db_path,
          "--period-ms", std::to_string(c.period_ms),
          "--duration-s", std::to_string(duration_s),
          "--queries-per-request", std::to_string(c.sqlite_queries_per_request),
          "--trace", work_dir_ + "/canary-sqlite.trace",
          "--start-at-ns", std::to_string(start_at_ns),
          "--seed", std::to_string(c.seed)};
}

}  // namespace harness::case_
