// The analysis says what it cannot say: one triplet per stratum gives zero-width intervals, so the
// verdict is "not assessable" (never HARM or benefit); B too small for 10 replicates in each tail at
// the simultaneous level is an error naming the minimum B (alpha / (2 m) x B >= 10).
#include "analysis/report/analysis_report.hpp"

#include "golden_db.hpp"

#include <gtest/gtest.h>

namespace {

// One triplet in each of two strata; bounded reclaim 1.5x slower than static and 1.2x slower than
// delayed on both canaries, so zero-width intervals would lie wholly above 1 ("HARM").
std::string one_triplet_per_stratum() {
  std::vector<golden::Case> v;
  for (const char* vm : {"vm0", "vm1"}) {
    v.push_back({vm, "r", 1, "static-zram", 10000, 20000});
    v.push_back({vm, "r", 1, "delayed-activation", 12500, 25000});
    v.push_back({vm, "r", 1, "bounded-reclaim", 15000, 30000});
  }
  const auto path = golden::written_db("single_triplets", v);
  return path;
}

}  // namespace

TEST(Assessable, OneTripletPerStratumIsNotAssessable) {
  const auto path = one_triplet_per_stratum();
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  ASSERT_EQ(ts.triplets.size(), 2u);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 1, 1};
  const auto pr = analysis::run_primary(ts, opt);
  EXPECT_NEAR(pr.comparisons[0].estimate, 1.5, 1e-12);
  EXPECT_NEAR(pr.comparisons[0].lower, 1.5, 1e-12);  // zero width
  EXPECT_NEAR(pr.comparisons[0].upper, 1.5, 1e-12);
  EXPECT_FALSE(pr.verdict.assessable);
  EXPECT_FALSE(pr.verdict.general_benefit);
  EXPECT_TRUE(pr.verdict.harm.empty());
  EXPECT_EQ(pr.verdict.text.rfind("NOT ASSESSABLE (no resampling variability): each of the 2 (vm, regime) strata", 0), 0u)
      << pr.verdict.text;
  const auto r = analysis::build_analysis_report(data, ts, pr);
  const auto& t4 = r.tables.at(2);
  ASSERT_EQ(t4.id, "table4_primary");
  for (const auto& row : t4.rows) EXPECT_EQ(row[6], "not assessable");
  const std::string md = analysis::render_markdown(r);
  EXPECT_EQ(md.find("HARM"), std::string::npos);
  EXPECT_EQ(r.extra["verdict"]["assessable"], false);
}

TEST(Assessable, MinimumReplicatesNamedInTheError) {
  EXPECT_EQ(analysis::minimum_replicates(0.05, 4), 1600);
  EXPECT_EQ(analysis::minimum_replicates(0.10, 4), 800);
  const auto path = one_triplet_per_stratum();
  const auto data = analysis::load_campaign(path);
  const auto ts = analysis::build_triplets(data);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {1599, 1, 1};
  try {
    analysis::run_primary(ts, opt);
    FAIL() << "expected std::invalid_argument for B = 1599";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("minimum B = 1600"), std::string::npos) << e.what();
  }
  opt.bootstrap.replicates = 1600;
  EXPECT_NO_THROW(analysis::run_primary(ts, opt));
  opt.alpha = 0.10;
  opt.bootstrap.replicates = 799;
  EXPECT_THROW(analysis::run_primary(ts, opt), std::invalid_argument);
}
