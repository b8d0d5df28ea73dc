// Reclaim action record arithmetic (rules: docs/PROTOCOL.md "Achieved reclaim").
#include "harness/case/control/reclaim_record.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace harness::case_ {

namespace {
void check_page(std::int64_t page_size_bytes) {
  if (page_size_bytes <= 0) throw std::invalid_argument("ReclaimRecord: page size must be > 0");
}
}  // namespace

std::optional<PgstealRate> pgsteal_rate_before(const std::vector<TelemetrySample>& samples, int windows) {
  if (windows < 1 || samples.size() < static_cast<std::size_t>(windows) + 1) return std::nullopt;
  const TelemetrySample& a = samples[samples.size() - 1 - static_cast<std::size_t>(windows)];
  const TelemetrySample& z = samples.back();
  if (!a.bg_pgsteal || !z.bg_pgsteal) return std::nullopt;
  const std::int64_t span = z.read_ns.value_or(z.t_ns) - a.read_ns.value_or(a.t_ns);
  if (span <= 0) return std::nullopt;
  return PgstealRate{*z.bg_pgsteal - *a.bg_pgsteal, span, windows};
}

std::optional<std::int64_t> ReclaimRecord::achieved_bytes(std::int64_t page_size_bytes) const {
  check_page(page_size_bytes);
  if (!counter_after || !counter_before) return std::nullopt;
  return (*counter_after - *counter_before) * page_size_bytes;
}

std::optional<std::int64_t> ReclaimRecord::concurrent_estimate_bytes(std::int64_t page_size_bytes) const {
  check_page(page_size_bytes);
  if (counter == "pgsteal_proactive") return 0;
  if (!concurrent_rate || concurrent_rate->window_ns <= 0) return std::nullopt;
  // 128-bit intermediate: pages x page x ns overflows 64 bits for long writes.
  const __int128 num = static_cast<__int128>(concurrent_rate->pages) * page_size_bytes * duration_ns();
  return static_cast<std::int64_t>(num / concurrent_rate->window_ns);
}

std::optional<std::int64_t> ReclaimRecord::achieved_conservative_bytes(std::int64_t page_size_bytes) const {
  auto a = achieved_bytes(page_size_bytes);
  auto c = concurrent_estimate_bytes(page_size_bytes);
  if (!a || !c) return std::nullopt;
  return std::max<std::int64_t>(0, *a - *c);
}

std::optional<std::int64_t> ReclaimRecord::achieved_settled_bytes(std::int64_t page_size_bytes) const {
  check_page(page_size_bytes);
  if (!pgsteal_settled || !pgsteal_before) return std::nullopt;
  return (*pgsteal_settled - *pgsteal_before) * page_size_bytes;
}

std::optional<double> ReclaimRecord::achieved_ratio(std::int64_t page_size_bytes) const {
  auto a = achieved_conservative_bytes(page_size_bytes);
  if (!a || requested_bytes <= 0) return std::nullopt;
  return static_cast<double>(*a) / static_cast<double>(requested_bytes);
}

std::optional<std::int64_t> ReclaimRecord::current_drop_bytes() const {
  if (!bg_current_before_bytes || !bg_current_after_bytes) return std::nullopt;
  return *bg_current_before_bytes - *bg_current_after_bytes;
}

const char* ReclaimRecord::outcome(std::int64_t page_size_bytes) const {
  if (write_errno == EAGAIN) return "partial";
  if (write_errno != 0) return "error";
  auto a = achieved_conservative_bytes(page_size_bytes);
  if (a && *a < requested_bytes) return "partial";
  return "ok";
}

nlohmann::json ReclaimRecord::to_json(std::int64_t page_size_bytes) const {
  auto opt = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json j{
      {"requested_bytes", requested_bytes},
      {"start_ns", start_ns},
      {"end_ns", end_ns},
      {"duration_ns", duration_ns()},
      {"write_errno", write_errno},
      {"write_error", write_errno ? std::string(std::strerror(write_errno)) : std::string()},
      {"pgsteal_before", opt(pgsteal_before)},
      {"pgsteal_after", opt(pgsteal_after)},
      {"pgsteal_settled", opt(pgsteal_settled)},
      {"pgscan_before", opt(pgscan_before)},
      {"pgscan_after", opt(pgscan_after)},
      {"pgscan_settled", opt(pgscan_settled)},
      {"bg_current_before_bytes", opt(bg_current_before_bytes)},
      {"bg_current_after_bytes", opt(bg_current_after_bytes)},
      {"write_cpu_ns", opt(write_cpu_ns)},
      {"achieved_counter", counter},
      {"counter_before", opt(counter_before)},
      {"counter_after", opt(counter_after)},
      {"achieved_bytes", opt(achieved_bytes(page_size_bytes))},
      {"concurrent_estimate_bytes", opt(concurrent_estimate_bytes(page_size_bytes))},
      {"achieved_conservative_bytes", opt(achieved_conservative_bytes(page_size_bytes))},
      {"achieved_settled_bytes", opt(achieved_settled_bytes(page_size_bytes))},
      {"current_drop_bytes", opt(current_drop_bytes())},
      {"outcome", outcome(page_size_bytes)},
  };
  j["concurrent_rate"] = concurrent_rate ? nlohmann::json{{"pages", concurrent_rate->pages},
                                                          {"window_ns", concurrent_rate->window_ns},
                                                          {"windows", concurrent_rate->windows}}
                                         : nlohmann::json();
  auto r = achieved_ratio(page_size_bytes);
  j["achieved_ratio"] = r ? nlohmann::json(*r) : nlohmann::json();
  return j;
}

}  // namespace harness::case_
