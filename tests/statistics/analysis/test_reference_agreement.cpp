// Agreement with the independent NumPy implementation analysis/reference/bootstrap_ref.py on the
// same synthetic campaign DB (5 VMs x 4 regimes x 3 triplets = 60 triplets, 180 cases):
//  - point estimates equal to 1e-12 (relative);
//  - interval bounds within Monte Carlo tolerance. The two use different generators (mt19937_64 vs
//    PCG64), so each bound is an independent estimate of the same bootstrap quantile. For the
//    a = 0.00625 quantile of B replicates the standard error is about sqrt(a(1-a)/B) / phi(z_a) x sd
//    (normal approximation; sd = bootstrap sd on the log scale); the difference of two has sqrt(2)
//    times that. Tolerance: 5 such standard errors on the log scale (B = 20000: 0.22 sd).
#include "analysis/campaign_data.hpp"
#include "analysis/primary.hpp"
#include "analysis/synthetic.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace {
std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  EXPECT_EQ(rc, 0) << cmd;
  return out;
}
}  // namespace

TEST(ReferenceAgreement, PointEstimatesExactBoundsWithinMonteCarloTolerance) {
  const auto dir = std::filesystem::temp_directory_path() / ("hk_analysis_stat_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "agree.db").string();
  const analysis::SyntheticOptions o{.seed = 2024, .vms = 5, .triplets_per_stratum = 3, .case_sd = 0.08, .pressure_s = 30};
  analysis::write_synthetic_campaign(db, o);

  const int B = 20000;
  const std::uint64_t seed = 11;
  const auto data = analysis::load_campaign(db);
  const auto ts = analysis::build_triplets(data);
  ASSERT_EQ(ts.triplets.size(), 60u);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {B, seed, 2};
  const auto pr = analysis::run_primary(ts, opt);

  const std::string cmd = "/usr/bin/python3 " HARNESS_SOURCE_DIR "/analysis/reference/bootstrap_ref.py " + db +
                          " --replicates " + std::to_string(B) + " --seed " + std::to_string(seed);
  const auto j = nlohmann::json::parse(run(cmd));
  ASSERT_EQ(j["triplets"].get<int>(), 60);
  const double a = (1 - pr.level) / 2;
  const double z = 2.4977054744;  // Phi^-1(1 - 0.00625)
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  const double se_sd = std::sqrt(a * (1 - a) / B) / phi;  // per sd of the replicate distribution
  for (int k = 0; k < 4; ++k) {
    const auto& c = pr.comparisons[k];
    const double py_est = j["estimate"][k].get<double>();
    EXPECT_NEAR(c.estimate / py_est, 1.0, 1e-12) << c.label;
    const double sd = j["log_sd"][k].get<double>();
    const double tol = 5 * std::sqrt(2.0) * se_sd * sd;
    auto check = [&](double cpp, const char* key) {
      const double d = std::abs(std::log(cpp) - std::log(j[key][k].get<double>()));
      EXPECT_LE(d, tol) << c.label << " " << key << ": C++ " << cpp << " NumPy " << j[key][k].get<double>();
      return d / (std::sqrt(2.0) * se_sd * sd);
    };
    const double zl = check(c.lower, "lower"), zu = check(c.upper, "upper");
    const double zcl = check(c.corrected_lower, "corrected_lower"), zcu = check(c.corrected_upper, "corrected_upper");
    std::printf("%-28s est C++ %.15f NumPy %.15f | lower %.5f vs %.5f (%.2f SE) | upper %.5f vs %.5f (%.2f SE) | "
                "corrected %.2f / %.2f SE | tol %.5f (log)\n",
                c.label.c_str(), c.estimate, py_est, c.lower, j["lower"][k].get<double>(), zl, c.upper,
                j["upper"][k].get<double>(), zu, zcl, zcu, tol);
  }
  std::filesystem::remove_all(dir);
}
