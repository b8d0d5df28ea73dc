// Type-7 quantiles (values checked against numpy.percentile, default method) and the summary.
#include "canaries/percentile.hpp"
#include "canaries/summary.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

TEST(Percentile, MatchesNumpyDefault) {
  // numpy: percentile([15,20,35,40,50], 40) = 29.0; percentile(1..100, 99) = 99.01;
  // percentile([1,2,3,4], 50) = 2.5; percentile(1..10, 95) = 9.55; percentile([3], 99) = 3.
  EXPECT_DOUBLE_EQ(canaries::quantile_type7({50, 15, 40, 20, 35}, 0.40), 29.0);
  std::vector<double> v(100);
  std::iota(v.begin(), v.end(), 1.0);
  EXPECT_NEAR(canaries::quantile_type7(v, 0.99), 99.01, 1e-12);
  EXPECT_DOUBLE_EQ(canaries::quantile_type7({4, 3, 2, 1}, 0.5), 2.5);
  std::vector<double> w(10);
  std::iota(w.begin(), w.end(), 1.0);
  EXPECT_NEAR(canaries::quantile_type7(w, 0.95), 9.55, 1e-12);
  EXPECT_DOUBLE_EQ(canaries::quantile_type7({3}, 0.99), 3.0);
  EXPECT_DOUBLE_EQ(canaries::quantile_type7(w, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(canaries::quantile_type7(w, 1.0), 10.0);
}

TEST(Percentile, RejectsEmptyAndBadP) {
  EXPECT_THROW(canaries::quantile_type7({}, 0.5), std::invalid_argument);
  EXPECT_THROW(canaries::quantile_type7({1, 2}, 1.5), std::invalid_argument);
  EXPECT_THROW(canaries::quantile_type7({1, 2}, -0.1), std::invalid_argument);
}

TEST(Summary, CountsMissesIncompleteAndQuantiles) {
  const std::int64_t P = 100'000'000;
  std::vector<canaries::TraceRecord> r;
  // wake delays 1..4 ms, service 1 ms; the fourth completes 1 ns after the next start.
  r.push_back({0, 0, 1'000'000, 2'000'000, 1, 0, 0, 0});
  r.push_back({1, P, P + 2'000'000, P + 3'000'000, 1, 0, 0, 0});
  r.push_back({2, 2 * P, 2 * P + 3'000'000, 2 * P + 4'000'000, 1, 2, 0, 0});
  r.push_back({3, 3 * P, 3 * P + 4'000'000, 4 * P + 1, 1, 0, 0, 0});
  r.push_back({4, 4 * P, 4 * P + 1, 0, 0, 0, 0, 0});  // incomplete
  const auto j = canaries::summarize({"sqlite", P, 0, 2}, r);
  EXPECT_EQ(j["canary"], "sqlite");
  EXPECT_EQ(j["requests_recorded"].get<int>(), 5);
  EXPECT_EQ(j["requests_not_recorded"].get<int>(), 2);
  EXPECT_EQ(j["incomplete"].get<int>(), 1);
  EXPECT_EQ(j["deadline_misses"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(j["wake_delay_us"]["p50"].get<double>(), 2500.0);
  EXPECT_DOUBLE_EQ(j["wake_delay_us"]["max"].get<double>(), 4000.0);
  EXPECT_DOUBLE_EQ(j["response_time_us"]["max"].get<double>(), 100'000.001);
  EXPECT_EQ(j["majflt"].get<int>(), 2);
  EXPECT_EQ(j["minflt"].get<int>(), 4);
}

TEST(Summary, NoCompletedRequestsGivesNulls) {
  const auto j = canaries::summarize({"compute", 100'000'000, 0, 0}, {});
  EXPECT_TRUE(j["wake_delay_us"]["p99"].is_null());
  EXPECT_EQ(j["deadline_misses"].get<int>(), 0);
}
