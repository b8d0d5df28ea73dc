// results::csv_field: RFC 4180 quoting shared by `harness export` and the analysis report CSVs.
#include "results/csv.hpp"

#include <gtest/gtest.h>

TEST(CsvField, PlainFieldsStayAsTheyAre) {
  EXPECT_EQ(results::csv_field("p99_us"), "p99_us");
  EXPECT_EQ(results::csv_field(""), "");
  EXPECT_EQ(results::csv_field("a b;c"), "a b;c");
}

TEST(CsvField, CommaQuoteCrAndLfAreQuotedAndQuotesDoubled) {
  EXPECT_EQ(results::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(results::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(results::csv_field("line1\nline2"), "\"line1\nline2\"");
  EXPECT_EQ(results::csv_field("cr\rhere"), "\"cr\rhere\"");
}
