// harness/text: the one join and the one shell quoting of the harness.
#include "harness/text/join.hpp"
#include "harness/text/shell_quote.hpp"
#include "harness/text/utc.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using harness::text::join;
using harness::text::shell_join;
using harness::text::shell_quote;
using harness::text::utc_text;

TEST(Join, SeparatorOnlyBetweenElementsAndNothingForAnEmptyRange) {
  EXPECT_EQ(join(std::vector<std::string>{"vm0", "vm1", "vm2"}), "vm0, vm1, vm2");
  EXPECT_EQ(join(std::vector<std::string>{"a", "b"}, "; "), "a; b");
  EXPECT_EQ(join(std::vector<std::string>{"only"}, "; "), "only");
  EXPECT_EQ(join(std::vector<std::string>{}), "");
  // Empty elements keep their place (a list of fields, some empty).
  EXPECT_EQ(join(std::vector<std::string>{"", "x", ""}, ","), ",x,");
}

TEST(Join, AnyRangeInItsOwnOrderAndElementsThatAreNotStrings) {
  EXPECT_EQ(join(std::set<std::string>{"b", "a"}, " or "), "a or b");
  const char* words[] = {"harness", "run"};
  EXPECT_EQ(join(words, " "), "harness run");
  const std::map<std::string, int> counts{{"kvm", 2}, {"tcg", 1}};
  EXPECT_EQ(join(counts, ", ", [](const auto& kv) { return std::to_string(kv.second) + " " + kv.first; }),
            "2 kvm, 1 tcg");
  EXPECT_EQ(join(std::vector<int>{16, 32}, "/", [](int x) { return std::to_string(x); }), "16/32");
}

TEST(ShellQuote, PlainArgumentsStayBare) {
  EXPECT_EQ(shell_quote("/var/lib/harness/swapfile"), "/var/lib/harness/swapfile");
  EXPECT_EQ(shell_quote("--seed=7"), "--seed=7");
  EXPECT_EQ(shell_quote("a_b.c:d,e+f@g%h-i"), "a_b.c:d,e+f@g%h-i");
}

TEST(ShellQuote, MetacharactersAreSingleQuoted) {
  EXPECT_EQ(shell_quote("/x; rm -rf /"), "'/x; rm -rf /'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$(id)"), "'$(id)'");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("~"), "'~'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(ShellJoin, JoinsQuotedArguments) {
  const char* argv[] = {"harness", "analyze", "my db.sqlite"};
  EXPECT_EQ(shell_join(3, argv), "harness analyze 'my db.sqlite'");
  EXPECT_EQ(shell_join(0, argv), "");
}

TEST(UtcText, SecondsSinceTheEpochAsIso8601TheFractionDropped) {
  EXPECT_EQ(utc_text(0), "1970-01-01T00:00:00Z");
  // 2026-12-05T09:44:56Z = 1796463896 s; 999,999,999 ns later is still that second.
  EXPECT_EQ(utc_text(1796463896LL * 1'000'000'000), "2026-12-05T09:44:56Z");
  EXPECT_EQ(utc_text(1796463896LL * 1'000'000'000 + 999'999'999), "2026-12-05T09:44:56Z");
  // Half a second before the epoch lies in 1969's last second.
  EXPECT_EQ(utc_text(-500'000'000), "1969-12-31T23:59:59Z");
}

}  // namespace
