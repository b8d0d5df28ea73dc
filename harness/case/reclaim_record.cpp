// Reclaim action record arithmetic (rules: study pilot rule, DESIGN.md).
#include "harness/case/reclaim_record.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hcase {

std::optional<std::int64_t> ReclaimRecord::achieved_bytes(std::int64_t page_size_bytes) const {
  if (page_size_bytes <= 0) throw std::invalid_argument("ReclaimRecord: page size must be > 0");
  if (!pgsteal_settled || !pgsteal_before) return std::nullopt;
  return (*pgsteal_settled - *pgsteal_before) * page_size_bytes;
}

std::optional<double> ReclaimRecord::achieved_ratio(std::int64_t page_size_bytes) const {
  auto a = achieved_bytes(page_size_bytes);
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
  auto a = achieved_bytes(page_size_bytes);
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
      {"achieved_bytes", opt(achieved_bytes(page_size_bytes))},
      {"current_drop_bytes", opt(current_drop_bytes())},
      {"outcome", outcome(page_size_bytes)},
  };
  auto r = achieved_ratio(page_size_bytes);
  j["achieved_ratio"] = r ? nlohmann::json(*r) : nlohmann::json();
  return j;
}

}  // namespace hcase
