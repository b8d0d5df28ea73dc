// Mechanism counters of one calibration bundle (definitions: analysis/campaign_data.cpp).
#include "harness/calibrate/measure.hpp"
#include "harness/json/limited_parse.hpp"

#include <vector>

#include <nlohmann/json.hpp>

#include "results/db.hpp"

namespace harness::calibrate {

Measured measure_bundle(const std::string& path, double target_s) {
  results::Db db(path, results::Db::Mode::ReadOnly);
  Measured m;
  std::int64_t page = 4096, ps = 0, pe = 0;
  {
    results::Stmt c(db, "SELECT case_id, status, page_size_bytes, outcome_json, accelerator FROM cases");
    if (!c.step()) return m;
    m.case_id = c.text(0);
    m.status = c.text(1);
    page = c.opt_int64(2).value_or(4096);
    m.accelerator = c.opt_text(4).value_or("");
    if (auto o = c.opt_text(3)) {
      auto j = harness::json::parse_or_discarded(*o);
      if (j.is_object() && j.contains("load") && j["load"].is_object()) {
        const auto& l = j["load"];
        if (l["achieved_rate_mib_s"].is_number()) m.achieved_rate_mib_s = l["achieved_rate_mib_s"].get<double>();
        const auto& e = l["episode"];
        if (e.is_object() && e["length_s"].is_number()) m.episode_s = e["length_s"].get<double>();
        if (e.is_object() && e["fraction_of_pressure"].is_number())
          m.episode_fraction = e["fraction_of_pressure"].get<double>();
      }
    }
  }
  {
    results::Stmt p(db, "SELECT start_ns, end_ns FROM phases WHERE phase='pressure'");
    if (!p.step() || p.is_null(1)) return m;
    ps = p.int64(0);
    pe = p.int64(1);
    m.pressure_s = static_cast<double>(pe - ps) / 1e9;
  }
  struct Row {
    std::int64_t t;
    std::optional<std::int64_t> pswpout, ra, rf, fra, frf, some, full;
  };
  std::vector<Row> rows;
  results::Stmt st(db,
                   "SELECT t_ns, pswpout, bg_workingset_refault_anon, bg_workingset_refault_file, "
                   "fg_workingset_refault_anon, fg_workingset_refault_file, bg_some_us, bg_full_us "
                   "FROM telemetry WHERE t_ns >= ?1 AND t_ns <= ?2 ORDER BY t_ns");
  st.bind(1, ps).bind(2, pe);
  while (st.step())
    rows.push_back({st.int64(0), st.opt_int64(1), st.opt_int64(2), st.opt_int64(3), st.opt_int64(4),
                    st.opt_int64(5), st.opt_int64(6), st.opt_int64(7)});
  if (rows.size() < 2) return m;
  // Delta of a column between the first and last row that have it, and the rate over the
  // second half of the phase (rows with t >= the middle).
  auto delta = [&](auto get, std::int64_t from_t) -> std::optional<std::pair<double, double>> {
    const Row* a = nullptr;
    const Row* z = nullptr;
    for (const auto& r : rows)
      if (r.t >= from_t && get(r)) {
        if (!a) a = &r;
        z = &r;
      }
    if (!a || a == z) return std::nullopt;
    return std::pair<double, double>{static_cast<double>(*get(*z) - *get(*a)), static_cast<double>(z->t - a->t) / 1e9};
  };
  auto pswp = [](const Row& r) { return r.pswpout; };
  auto ra = [](const Row& r) { return r.ra; };
  auto all = [](const Row& r) -> std::optional<std::int64_t> {
    if (!r.ra || !r.rf) return std::nullopt;
    return *r.ra + *r.rf + r.fra.value_or(0) + r.frf.value_or(0);
  };
  auto some = [](const Row& r) { return r.some; };
  auto full = [](const Row& r) { return r.full; };
  const double kib = static_cast<double>(page) / 1024.0;
  if (auto d = delta(pswp, ps)) m.swapout_kib = d->first * kib;
  if (auto d = delta(ra, ps)) m.refault_anon_bg = d->first;
  if (auto d = delta(all, ps)) m.refault_all = d->first;
  if (auto d = delta(some, ps)) m.bg_some_s = d->first / 1e6;
  if (auto d = delta(full, ps)) m.bg_full_s = d->first / 1e6;
  const std::int64_t mid = ps + (pe - ps) / 2;
  auto project = [&](std::optional<double> v, auto get, double scale) -> std::optional<double> {
    if (!v) return std::nullopt;
    if (m.pressure_s >= target_s) return v;
    auto d = delta(get, mid);
    if (!d || d->second <= 0) return std::nullopt;
    return *v + d->first * scale / d->second * (target_s - m.pressure_s);
  };
  m.swapout_kib_300 = project(m.swapout_kib, pswp, kib);
  m.refault_anon_bg_300 = project(m.refault_anon_bg, ra, 1.0);
  return m;
}

}  // namespace harness::calibrate
