// Mechanism counters of one calibration bundle (definitions: analysis/campaign_data.cpp).
#include "harness/calibrate/measure.hpp"
#include "harness/json/limited_parse.hpp"

#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/db.hpp"

namespace harness::calibrate {

namespace {

/// One telemetry sample of the pressure phase: the columns measured (t in ns; counters as stored).
struct PressureRow {
  std::int64_t t;
  std::optional<std::int64_t> pswpout, ra, rf, fra, frf, some, full;
};

/// The pressure phase's [start, end], ns.
struct PressureWindow {
  std::int64_t start_ns = 0, end_ns = 0;
};

/// The `cases` row into `m` (ids, status, accelerator, outcome_json.load); the page size in
/// bytes (4096 when not recorded), or nullopt when the bundle holds no case.
std::optional<std::int64_t> read_case_row(results::Db& db, Measured& m) {
  results::Stmt c(db, "SELECT case_id, status, page_size_bytes, outcome_json, accelerator FROM cases");
  if (!c.step()) return std::nullopt;
  m.case_id = c.text(0);
  m.status = c.text(1);
  const std::int64_t page = c.opt_int64(2).value_or(4096);
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
  return page;
}

/// The pressure phase's boundaries, or nullopt when it has none or did not end.
std::optional<PressureWindow> read_pressure_window(results::Db& db) {
  results::Stmt p(db, "SELECT start_ns, end_ns FROM phases WHERE phase='pressure'");
  if (!p.step() || p.is_null(1)) return std::nullopt;
  return PressureWindow{p.int64(0), p.int64(1)};
}

/// The telemetry samples with t_ns in [w.start_ns, w.end_ns], by time.
std::vector<PressureRow> read_pressure_rows(results::Db& db, const PressureWindow& w) {
  std::vector<PressureRow> rows;
  results::Stmt st(db,
                   "SELECT t_ns, pswpout, bg_workingset_refault_anon, bg_workingset_refault_file, "
                   "fg_workingset_refault_anon, fg_workingset_refault_file, bg_some_us, bg_full_us "
                   "FROM telemetry WHERE t_ns >= ?1 AND t_ns <= ?2 ORDER BY t_ns");
  st.bind(1, w.start_ns).bind(2, w.end_ns);
  while (st.step())
    rows.push_back({st.int64(0), st.opt_int64(1), st.opt_int64(2), st.opt_int64(3), st.opt_int64(4), st.opt_int64(5),
                    st.opt_int64(6), st.opt_int64(7)});
  return rows;
}

/// (change, seconds) of the column `get` between the first and last row with t >= from_t that
/// have it; nullopt when fewer than two rows have it.
template <class Get>
std::optional<std::pair<double, double>> counter_delta(const std::vector<PressureRow>& rows, Get get,
                                                       std::int64_t from_t) {
  const PressureRow* a = nullptr;
  const PressureRow* z = nullptr;
  for (const auto& r : rows)
    if (r.t >= from_t && get(r)) {
      if (!a) a = &r;
      z = &r;
    }
  if (!a || a == z) return std::nullopt;
  return std::pair<double, double>{static_cast<double>(*get(*z) - *get(*a)), static_cast<double>(z->t - a->t) / 1e9};
}

/// The counters over the whole phase into `m`, and the projection of swap-out and bg anon
/// refaults to `target_s` from the rate over the second half of the phase (page in bytes).
void measure_rows(const std::vector<PressureRow>& rows, const PressureWindow& w, std::int64_t page, double target_s,
                  Measured& m) {
  auto pswp = [](const PressureRow& r) { return r.pswpout; };
  auto ra = [](const PressureRow& r) { return r.ra; };
  auto all = [](const PressureRow& r) -> std::optional<std::int64_t> {
    if (!r.ra || !r.rf) return std::nullopt;
    return *r.ra + *r.rf + r.fra.value_or(0) + r.frf.value_or(0);
  };
  auto some = [](const PressureRow& r) { return r.some; };
  auto full = [](const PressureRow& r) { return r.full; };
  const double kib = static_cast<double>(page) / 1024.0;
  const std::int64_t ps = w.start_ns;
  if (auto d = counter_delta(rows, pswp, ps)) m.swapout_kib = d->first * kib;
  if (auto d = counter_delta(rows, ra, ps)) m.refault_anon_bg = d->first;
  if (auto d = counter_delta(rows, all, ps)) m.refault_all = d->first;
  if (auto d = counter_delta(rows, some, ps)) m.bg_some_s = d->first / 1e6;
  if (auto d = counter_delta(rows, full, ps)) m.bg_full_s = d->first / 1e6;
  const std::int64_t mid = ps + (w.end_ns - ps) / 2;
  auto project = [&](std::optional<double> v, auto get, double scale) -> std::optional<double> {
    if (!v) return std::nullopt;
    if (m.pressure_s >= target_s) return v;
    auto d = counter_delta(rows, get, mid);
    if (!d || d->second <= 0) return std::nullopt;
    return *v + d->first * scale / d->second * (target_s - m.pressure_s);
  };
  m.swapout_kib_300 = project(m.swapout_kib, pswp, kib);
  m.refault_anon_bg_300 = project(m.refault_anon_bg, ra, 1.0);
}

}  // namespace

Measured measure_bundle(const std::string& path, double target_s) {
  results::Db db(path, results::Db::Mode::ReadOnly);
  Measured m;
  const auto page = read_case_row(db, m);
  if (!page) return m;
  const auto window = read_pressure_window(db);
  if (!window) return m;
  m.pressure_s = static_cast<double>(window->end_ns - window->start_ns) / 1e9;
  const auto rows = read_pressure_rows(db, *window);
  if (rows.size() < 2) return m;
  measure_rows(rows, *window, *page, target_s, m);
  return m;
}

}  // namespace harness::calibrate
