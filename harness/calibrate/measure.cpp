// Mechanism counters of one calibration bundle (definitions: analysis/data/campaign_data.cpp).
#include "harness/calibrate/measure.hpp"
#include "harness/json/limited_parse.hpp"

#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/db.hpp"
#include "results/store/cases.hpp"
#include "results/store/phases.hpp"
#include "results/store/telemetry.hpp"

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
  const auto c = results::first_case(db);
  if (!c) return std::nullopt;
  m.case_id = c->case_id;
  m.status = c->status;
  const std::int64_t page = c->page_size_bytes.value_or(4096);
  m.accelerator = c->accelerator.value_or("");
  if (const auto& o = c->outcome_json) {
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

/// The pressure phase's boundaries of case `case_id` (the bundle's one case), or nullopt when it
/// has none or it did not end.
std::optional<PressureWindow> read_pressure_window(results::Db& db, const std::string& case_id) {
  const auto p = results::read_phase(db, case_id, "pressure");
  if (!p || !p->end_ns) return std::nullopt;
  return PressureWindow{p->start_ns, *p->end_ns};
}

/// Case `case_id`'s telemetry samples with t_ns in [w.start_ns, w.end_ns], by time.
std::vector<PressureRow> read_pressure_rows(results::Db& db, const std::string& case_id, const PressureWindow& w) {
  std::vector<PressureRow> rows;
  results::for_each_telemetry(db, case_id, results::TimeWindow{w.start_ns, w.end_ns}, [&](const results::TelemetryRow& t) {
    rows.push_back({t.t_ns, t.pswpout, t.bg_workingset_refault_anon, t.bg_workingset_refault_file,
                    t.fg_workingset_refault_anon, t.fg_workingset_refault_file, t.bg_some_us, t.bg_full_us});
  });
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
  const auto window = read_pressure_window(db, m.case_id);
  if (!window) return m;
  m.pressure_s = static_cast<double>(window->end_ns - window->start_ns) / 1e9;
  const auto rows = read_pressure_rows(db, m.case_id, *window);
  if (rows.size() < 2) return m;
  measure_rows(rows, *window, *page, target_s, m);
  return m;
}

}  // namespace harness::calibrate
