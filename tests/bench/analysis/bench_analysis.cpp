// Analysis benchmark (not a timed test; prints, asserts nothing about time).
// 1. Bootstrap B = 10,000 on 60 triplets x 4 comparisons (20 strata x 3): C++ with 1 thread and with
//    all threads (best of 5), versus analysis/reference/bootstrap_ref.py --matrix on the same matrix
//    (its own elapsed time, measured inside Python around the estimator only; best of 3 runs);
//    prints the ratio.
// 2. Full analyze (load + per-case quantiles + triplets + bootstrap B = 10,000 + report) of a
//    synthetic 180-case DB (5 VMs x 4 regimes x 3 triplets x 3 configurations, phases 120/300/120 s,
//    2 canaries x 5,400 requests per case = 1.94 million canary records): wall time and peak RSS.
#include "analysis/report/analysis_report.hpp"
#include "analysis/stats/bootstrap.hpp"
#include "analysis/simulate/synthetic.hpp"

#include <nlohmann/json.hpp>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}
}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const auto dir = std::filesystem::temp_directory_path() / ("hk_analysis_bench_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);

  // 1. Bootstrap, C++ vs NumPy.
  const int B = 10000;
  Eigen::MatrixXd d(60, 4);
  std::vector<int> strata;
  boost::random::mt19937_64 gen(7);
  boost::random::normal_distribution<double> z(0.0, 0.1);
  for (int i = 0; i < 60; ++i) {
    strata.push_back(i / 3);
    for (int k = 0; k < 4; ++k) d(i, k) = -0.05 * k + z(gen);
  }
  const auto csv = (dir / "matrix.csv").string();
  {
    std::ofstream f(csv);
    f.precision(17);
    for (int i = 0; i < 60; ++i) f << strata[i] << "," << d(i, 0) << "," << d(i, 1) << "," << d(i, 2) << "," << d(i, 3) << "\n";
  }
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  double t1 = 1e9, tn = 1e9;
  for (int rep = 0; rep < 5; ++rep) {  // best of 5 (the machine may be shared)
    double t = now_s();
    analysis::stratified_bootstrap(d, strata, {B, 1, 1});
    t1 = std::min(t1, now_s() - t);
    t = now_s();
    analysis::stratified_bootstrap(d, strata, {B, 1, hw});
    tn = std::min(tn, now_s() - t);
  }
  double tpy = -1;
  for (int rep = 0; rep < 3; ++rep) {  // best of 3; each run's own elapsed_s (estimator only)
    const std::string cmd = "/usr/bin/python3 " HARNESS_SOURCE_DIR "/analysis/reference/bootstrap_ref.py --matrix " + csv +
                            " --replicates " + std::to_string(B) + " --seed 1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (p && pclose(p) == 0) {
      const double t = nlohmann::json::parse(out)["elapsed_s"].get<double>();
      tpy = tpy < 0 ? t : std::min(tpy, t);
    }
  }
  std::printf("bootstrap B=%d, 60 triplets x 4 comparisons (20 strata x 3):\n", B);
  std::printf("  C++ 1 thread      : %8.1f ms\n", t1 * 1e3);
  std::printf("  C++ %u thread(s)   : %8.1f ms\n", hw, tn * 1e3);
  if (tpy >= 0) std::printf("  NumPy reference   : %8.1f ms   -> NumPy / C++(1 thread) = %.1fx, / C++(%u) = %.1fx\n",
                            tpy * 1e3, tpy / t1, hw, tpy / tn);
  else std::printf("  NumPy reference   : failed to run\n");

  // 2. Full analyze of a ~2 M-record DB.
  const analysis::SyntheticOptions o = analysis::benchmark_campaign(quick);
  const auto db = (dir / "campaign180.db").string();
  double t = now_s();
  const auto rows = analysis::write_synthetic_campaign(db, o);
  const double tw = now_s() - t;
  const long rss_before = peak_rss_kib();
  t = now_s();
  analysis::PrimaryOptions opt;
  opt.bootstrap = {B, 1, 0};
  const auto rep = analysis::analyze_campaign(db, opt);
  const double ta = now_s() - t;
  std::printf("full analyze, 180 cases, %lld canary records (DB %.0f MiB, written in %.1f s):\n", static_cast<long long>(rows),
              std::filesystem::file_size(db) / 1048576.0, tw);
  std::printf("  load + quantiles + bootstrap B=%d + report: %.2f s; peak RSS %.1f MiB (before analyze %.1f MiB)\n", B, ta,
              peak_rss_kib() / 1024.0, rss_before / 1024.0);
  std::printf("  verdict: %s\n", rep.summary.front().c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
