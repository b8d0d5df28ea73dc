// The pieces of the coverage diagnostic: the one-pass interval test agrees with the percentile
// interval, the simulation's bootstrap has the report's replicate distribution, the analytic
// quantities at known designs, and the text `harness plan` prints. (The coverage figures
// themselves are measured in tests/statistics/analysis.)
#include "analysis/stats/bootstrap.hpp"
#include "analysis/stats/coverage.hpp"
#include "analysis/simulate/coverage_report.hpp"
#include "analysis/simulate/coverage_sim.hpp"
#include "analysis/stats/quantile.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <gtest/gtest.h>

#include <cmath>

TEST(CoverageSim, IntervalContainsAgreesWithThePercentileIntervalEverywhere) {
  boost::random::mt19937_64 gen(3);
  boost::random::normal_distribution<double> z(0.0, 1.0);
  boost::random::uniform_int_distribution<int> pick(0, 9);
  int inside = 0, outside = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 50 + trial;
    std::vector<double> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = trial % 3 == 0 ? std::round(4 * z(gen)) : z(gen);  // ties in every third trial
    const double level = trial % 2 ? 0.9875 : 0.9;
    const auto iv = analysis::percentile_interval(Eigen::Map<const Eigen::VectorXd>(x.data(), n), level);
    // Candidate truths: random, the interval's ends exactly, sample values and their neighbours.
    std::vector<double> ts{z(gen), iv.lower, iv.upper, std::nextafter(iv.lower, -1e9), std::nextafter(iv.upper, 1e9),
                           x[static_cast<std::size_t>(pick(gen))]};
    for (double t : ts) {
      const bool want = iv.lower <= t && t <= iv.upper;
      EXPECT_EQ(analysis::quantile7_interval_contains(x, (1 - level) / 2, 1 - (1 - level) / 2, t), want)
          << "trial " << trial << " t " << t;
      (want ? inside : outside)++;
    }
  }
  EXPECT_GT(inside, 300);
  EXPECT_GT(outside, 300);
  EXPECT_THROW(analysis::quantile7_interval_contains(std::vector<double>{}, 0.1, 0.9, 0), std::invalid_argument);
  EXPECT_THROW(analysis::quantile7_interval_contains(std::vector<double>{1, 2}, 0.9, 0.1, 0), std::invalid_argument);
}

// Same estimator, other random stream: the replicate distributions agree (mean, sd, the
// 98.75% ends) within Monte Carlo error of B = 40,000, for plain and corrected.
TEST(CoverageSim, SimulationBootstrapHasTheReportsReplicateDistribution) {
  const std::vector<int> sizes{2, 2, 1, 3, 2, 4, 1};
  std::vector<int> labels;
  for (std::size_t s = 0; s < sizes.size(); ++s)
    for (int i = 0; i < sizes[s]; ++i) labels.push_back(static_cast<int>(s));
  boost::random::mt19937_64 gen(11);
  boost::random::normal_distribution<double> z(0.0, 1.0);
  Eigen::MatrixXd d(static_cast<Eigen::Index>(labels.size()), 4);
  for (Eigen::Index i = 0; i < d.rows(); ++i)
    for (int k = 0; k < 4; ++k) d(i, k) = 0.1 * k + 0.2 * labels[static_cast<std::size_t>(i)] + z(gen);
  const int B = 40000;
  const auto ref = analysis::stratified_bootstrap(d, labels, {B, 5, 1});
  const auto sim = analysis::simulation_bootstrap(d, sizes, B, 5);
  EXPECT_EQ(sim.stratum_sizes, sizes);
  for (int k = 0; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(sim.point(k), ref.point(k));
    for (const auto* m : {&ref.plain, &ref.corrected}) {
      const bool plain = m == &ref.plain;
      const Eigen::VectorXd a = m->col(k), b = plain ? sim.plain.col(k) : sim.corrected.col(k);
      const double sd = std::sqrt((a.array() - a.mean()).square().mean());
      EXPECT_NEAR(b.mean(), a.mean(), 4 * sd / std::sqrt(B)) << k << (plain ? " plain" : " corrected");
      const double sdb = std::sqrt((b.array() - b.mean()).square().mean());
      EXPECT_NEAR(sdb / sd, 1.0, 0.03) << k;
      const auto ia = analysis::percentile_interval(a, 0.9875), ib = analysis::percentile_interval(b, 0.9875);
      EXPECT_NEAR(ib.lower, ia.lower, 0.12 * sd) << k;
      EXPECT_NEAR(ib.upper, ia.upper, 0.12 * sd) << k;
    }
  }
  EXPECT_THROW(analysis::simulation_bootstrap(d, {2, 2}, B, 5), std::invalid_argument);
}

TEST(CoverageAnalytic, KnownDesigns) {
  std::vector<int> study(24, 2);
  study.insert(study.end(), 12, 1);
  EXPECT_EQ(analysis::design_text(study), "24 strata of 2, 12 strata of 1");
  EXPECT_EQ(analysis::design_text({1}), "1 stratum of 1");
  const auto s = analysis::expected_design_coverage(study, 0.9875);
  EXPECT_DOUBLE_EQ(s.variance_factor, 0.25);      // (24 x 1/4) / (24/2 + 12)
  EXPECT_DOUBLE_EQ(s.corrected_variance_factor, 0.5);
  EXPECT_NEAR(s.df, 24.0, 1e-9);
  EXPECT_NEAR(s.kurtosis, -0.125, 1e-12);          // -sum d^4 / (sum d^2)^2 in expectation, 24 pairs
  EXPECT_NEAR(s.per_comparison, 0.7686, 5e-4);
  EXPECT_NEAR(s.corrected_per_comparison, 0.9047, 5e-4);
  EXPECT_NEAR(s.joint, std::pow(s.per_comparison, 4), 1e-12);
  const auto f = analysis::expected_design_coverage(std::vector<int>(20, 3), 0.9875);
  EXPECT_NEAR(f.variance_factor, 2.0 / 3, 1e-12);
  EXPECT_NEAR(f.df, 40.0, 1e-9);
  EXPECT_NEAR(f.kurtosis, -0.05, 1e-12);
  EXPECT_NEAR(f.per_comparison, 0.9505, 5e-4);
  // Many triplets per stratum: the t and kurtosis terms vanish, the normal form remains.
  const auto big = analysis::expected_design_coverage(std::vector<int>(4, 2000), 0.9875);
  EXPECT_NEAR(big.per_comparison, analysis::expected_coverage(big.variance_factor, 0.9875), 2e-4);
  // Every stratum one triplet: zero-width intervals.
  const auto one = analysis::expected_design_coverage({1, 1, 1}, 0.9875);
  EXPECT_EQ(one.per_comparison, 0.0);
  EXPECT_EQ(one.df, 0.0);
  EXPECT_THROW(analysis::expected_design_coverage({}, 0.9875), std::invalid_argument);
  EXPECT_THROW(analysis::expected_design_coverage({2, 0}, 0.9875), std::invalid_argument);
}

TEST(CoverageReport, PlanTextWarnsBelowNominalAndQuotesTheMeasuredFigure) {
  std::vector<int> study(24, 2);
  study.insert(study.end(), 12, 1);
  const auto t = analysis::design_coverage_text(study, 0.9875);
  EXPECT_NE(t.find("WARNING: below the nominal level"), std::string::npos) << t;
  EXPECT_NE(t.find("measured by simulation (tests/statistics/analysis, 2000 datasets x B = 10000, seed 1)"),
            std::string::npos) << t;
  ASSERT_NE(analysis::simulated_coverage_for(study, 0.9875), nullptr);
  EXPECT_EQ(analysis::simulated_coverage_for(study, 0.95), nullptr);  // another level: not simulated
  // A design with many triplets per stratum is not flagged, and says how to simulate it.
  const auto ok = analysis::design_coverage_text(std::vector<int>(4, 200), 0.9875);
  EXPECT_EQ(ok.find("WARNING"), std::string::npos) << ok;
  EXPECT_NE(ok.find("not simulated for this design: `harness plan FILE --simulate-coverage`"), std::string::npos);
}

// The study's family (k = 3 arms, its four comparisons, the default) draws exactly what the
// three-arm simulation drew before the simulation took k arms and m comparisons (issue 56): the
// datasets covered, per comparison and jointly, of 200 datasets x B = 2,000 on the design
// {2, 2, 2, 1, 3}, measured with the three-arm code (commit 73b39fa) for both models and two
// seeds. Any change in the order of the draws or in the arithmetic moves these counts.
TEST(CoverageSim, StudyFamilyGivesTheThreeArmSimulationsNumbers) {
  struct Expected {
    analysis::CoverageModel model;
    std::uint64_t seed;
    std::vector<int> plain, corrected;
    int plain_joint, corrected_joint;
  };
  const std::vector<Expected> expected{
      {analysis::CoverageModel::Independent, 1, {148, 141, 150, 144}, {164, 170, 167, 169}, 66, 102},
      {analysis::CoverageModel::Independent, 7, {141, 142, 150, 152}, {173, 163, 170, 169}, 58, 97},
      {analysis::CoverageModel::Triplet, 1, {148, 153, 158, 151}, {165, 174, 172, 168}, 79, 111},
      {analysis::CoverageModel::Triplet, 7, {157, 157, 156, 144}, {172, 175, 180, 167}, 74, 121}};
  const auto& study = analysis::study_sim_family();
  ASSERT_EQ(study.arms, 3);
  ASSERT_EQ(study.comparisons.size(), 4u);
  for (const auto& e : expected) {
    analysis::CoverageSimOptions o;
    o.datasets = 200;
    o.replicates = 2000;
    o.threads = 2;
    o.model = e.model;
    o.seed = e.seed;
    const auto r = analysis::simulate_coverage({2, 2, 2, 1, 3}, o);
    const std::string what = std::string(analysis::coverage_model_name(e.model)) + " seed " + std::to_string(e.seed);
    ASSERT_EQ(r.plain.size(), 4u) << what;
    for (std::size_t k = 0; k < 4; ++k) {
      EXPECT_EQ(std::lround(r.plain[k] * 200), e.plain[k]) << what << " comparison " << k;
      EXPECT_EQ(std::lround(r.corrected[k] * 200), e.corrected[k]) << what << " comparison " << k;
    }
    EXPECT_EQ(std::lround(r.plain_joint * 200), e.plain_joint) << what;
    EXPECT_EQ(std::lround(r.corrected_joint * 200), e.corrected_joint) << what;
  }
}

// A family's arms and comparisons: the study's comparisons among other arms keep their truth
// (Table 4's estimates), another comparison's truth is 1, and a comparison naming an arm the
// block does not have is refused.
TEST(CoverageSim, FamilyOfACampaignsArms) {
  const auto& study = analysis::study_comparisons();
  std::vector<std::string> arms{"senpai"};
  for (int i = 0; i < 3; ++i) arms.emplace_back(analysis::study_arm_name(i));
  std::vector<analysis::ComparisonDef> family{study[1], {analysis::Canary::Sqlite, "senpai", study[0].comparator, "x"}};
  const auto f = analysis::sim_family(arms, family);
  EXPECT_EQ(f.arms, 4);
  ASSERT_EQ(f.comparisons.size(), 2u);
  EXPECT_EQ(f.comparisons[0].true_ratio, analysis::study_sim_family().comparisons[1].true_ratio);
  EXPECT_EQ(f.comparisons[0].treatment, 3);
  EXPECT_EQ(f.comparisons[0].comparator, 2);
  EXPECT_EQ(f.comparisons[0].label, study[1].label);
  EXPECT_EQ(f.comparisons[1].true_ratio, 1.0);
  EXPECT_EQ(f.comparisons[1].treatment, 0);
  EXPECT_EQ(f.comparisons[1].canary, analysis::Canary::Sqlite);
  EXPECT_THROW(analysis::sim_family({"senpai", "other"}, family), std::invalid_argument);
  EXPECT_THROW(analysis::sim_family(arms, {}), std::invalid_argument);
}
