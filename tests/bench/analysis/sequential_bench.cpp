// Goal measurement of the sequential check (issue 47; analysis/stats/sequential.hpp): how many pairs
// `harness check --until-decided` needs to flag a p99 regression, measured on the noise of a
// real A/A campaign DB. Built, not registered as a test; run it by hand:
//   build/tests/bench/analysis/sequential_bench AA.db [--ratio 1.10] [--max-ratio 1.0]
//       [--first 6] [--cap 60] [--metrics 10] [--alpha 0.05] [--reps 1000] [--seed 1]
// For each p99 metric (compute_p99, sqlite_p99): `reps` synthetic sequences of `cap` pairs, each
// pair drawn with replacement from the DB's pairs (baseline and candidate of one pair kept
// together), the candidate's value multiplied by `ratio`; the sequential rule with looks every
// `first` pairs up to `cap`, alpha split over `metrics` metrics and the looks, tolerance
// max_ratio. Prints the share flagged "regression" within the cap, the median and 90th
// percentile of the pairs it took (over the sequences flagged), and the same rule's false-flag
// rate at x1.00 (the candidate unchanged). One stratum: the A/A DB's pairs are pooled, each
// pair also entered with its members swapped: in an A/A run the labels are exchangeable, and
// the swap makes the pool's true ratio exactly 1 (a few pairs' own ratio, e.g. 1.2, would
// otherwise be taken as the truth and count as a real change).
#include "analysis/data/ab_pairs.hpp"
#include "analysis/stats/bootstrap.hpp"
#include "analysis/stats/ratio_interval.hpp"
#include "analysis/stats/sequential.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string db;
  double ratio = 1.10, max_ratio = 1.0, alpha = 0.05;
  int first = 6, cap = 60, metrics = 10, reps = 1000;
  std::uint64_t seed = 1;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + ": needs a value");
      return argv[++i];
    };
    if (a == "--ratio") o.ratio = std::stod(value());
    else if (a == "--max-ratio") o.max_ratio = std::stod(value());
    else if (a == "--alpha") o.alpha = std::stod(value());
    else if (a == "--first") o.first = std::stoi(value());
    else if (a == "--cap") o.cap = std::stoi(value());
    else if (a == "--metrics") o.metrics = std::stoi(value());
    else if (a == "--reps") o.reps = std::stoi(value());
    else if (a == "--seed") o.seed = std::stoull(value());
    else if (!a.empty() && a[0] != '-' && o.db.empty()) o.db = a;
    else throw std::invalid_argument("unknown argument " + a);
  }
  if (o.db.empty()) throw std::invalid_argument("usage: sequential_bench AA.db [options] (see the source's header)");
  return o;
}

/// Sequences flagged, and the pairs each flagged one took.
struct Tally {
  int flagged = 0, decided_ok = 0;
  std::vector<int> pairs;
};

Tally simulate(const analysis::RegressionMetric& m, const analysis::MetricPairs& pool, double ratio, const Options& o) {
  const auto looks = analysis::look_schedule(o.first, o.cap);
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<std::size_t> pick(0, pool.rows.size() - 1);
  analysis::BootstrapOptions bo;  // unused by the decided rule (delta-method t interval)
  Tally t;
  for (int r = 0; r < o.reps; ++r) {
    analysis::MetricPairs seq;
    for (int k = 1; k <= o.cap; ++k) {
      const auto& row = pool.rows[pick(rng)];
      seq.rows.push_back({row[0], row[1] * ratio});
      seq.stratum.push_back("pooled");
      seq.repeat.push_back(k);
    }
    const auto out = analysis::run_sequential(m, seq, looks, o.max_ratio, std::nullopt, o.alpha, o.metrics, bo);
    if (out.verdict == "regression") {
      ++t.flagged;
      t.pairs.push_back(out.pairs);
    }
    t.decided_ok += out.verdict == "ok-decided" ? 1 : 0;
  }
  std::sort(t.pairs.begin(), t.pairs.end());
  return t;
}

int quantile_pairs(const std::vector<int>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto i = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const auto pairs = analysis::paired_values(o.db, o.db);
  const auto looks = analysis::look_schedule(o.first, o.cap);
  std::printf("sequential bench: %s; x%.2f on the candidate's p99; max_ratio %g; looks every %d pairs up to %d "
              "(K = %d); alpha %g over %d metric(s) x %d look(s): each interval at %.5g%%; %d sequences\n",
              o.db.c_str(), o.ratio, o.max_ratio, o.first, o.cap, looks.looks(), o.alpha, o.metrics, looks.looks(),
              100 * analysis::comparison_level(o.alpha, o.metrics, looks.looks()), o.reps);
  for (const auto& m : analysis::regression_metrics()) {
    const std::string name = m.name;
    if (name != "compute_p99" && name != "sqlite_p99") continue;
    const auto& aa = pairs.at(name);
    if (aa.rows.size() < 2) {
      std::printf("%s: %zu pair(s) in the DB; need 2 or more\n", m.name, aa.rows.size());
      continue;
    }
    analysis::MetricPairs pool;
    for (const auto& row : aa.rows)
      for (const auto& r : {row, std::array<double, 2>{row[1], row[0]}}) {
        pool.rows.push_back(r);
        pool.stratum.push_back("pooled");
      }
    analysis::MetricPairs own = aa;
    for (auto& x : own.stratum) x = "pooled";
    const auto spread = analysis::pair_spread(own);
    std::printf("%s: A/A ratio %.3g, per-pair SD of the linearised log ratio %.3g\n", m.name,
                spread ? spread->mean_c / spread->mean_b : 0.0, spread ? spread->sigma : 0.0);
    const auto change = simulate(m, pool, o.ratio, o);
    const auto none = simulate(m, pool, 1.0, o);
    std::printf("%s (%zu A/A pairs, pooled both ways): x%.2f flagged in %d of %d (%.1f%%) within %d pairs; pairs to flag median %d, "
                "90th percentile %d; x1.00 flagged in %d of %d (%.2f%%), decided ok in %d\n",
                m.name, aa.rows.size(), o.ratio, change.flagged, o.reps, 100.0 * change.flagged / o.reps, o.cap,
                quantile_pairs(change.pairs, 0.5), quantile_pairs(change.pairs, 0.9), none.flagged, o.reps,
                100.0 * none.flagged / o.reps, none.decided_ok);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "sequential_bench: %s\n", e.what());
  return 2;
}
