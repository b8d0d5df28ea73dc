// load_campaign summarises cases on several threads (campaign_data.hpp): the result is the
// same, case for case and warning for warning, whatever the thread count.
#include "analysis/data/campaign_data.hpp"
#include "analysis/data/case_columns.hpp"
#include "analysis/simulate/synthetic.hpp"

#include "golden_db.hpp"
#include "tests/common/small_synthetic.hpp"

#include <gtest/gtest.h>

TEST(LoadCampaign, TheSameForEveryThreadCount) {
  const auto db = golden::temp_db("load-threads");
  analysis::write_synthetic_campaign(db, test_support::small_synthetic());
  const auto one = analysis::load_campaign(db, 1);
  ASSERT_GE(one.cases.size(), 24u);
  for (unsigned threads : {2u, 3u, 0u}) {
    const auto many = analysis::load_campaign(db, threads);
    ASSERT_EQ(many.cases.size(), one.cases.size()) << threads;
    for (std::size_t i = 0; i < one.cases.size(); ++i) EXPECT_EQ(many.cases[i].case_id, one.cases[i].case_id);
    EXPECT_EQ(analysis::case_columns_json(analysis::case_columns(many)),
              analysis::case_columns_json(analysis::case_columns(one)))
        << threads;
    EXPECT_EQ(many.warnings, one.warnings) << threads;
    EXPECT_EQ(many.infra_failed, one.infra_failed) << threads;
    EXPECT_EQ(many.missing, one.missing) << threads;
  }
}

TEST(LoadCampaign, AnUnreadableDbIsAnErrorOnEveryThreadCount) {
  for (unsigned threads : {1u, 3u})
    EXPECT_THROW(analysis::load_campaign("/nonexistent/campaign.db", threads), std::exception);
}
