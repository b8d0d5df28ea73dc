// The strict YAML reader every YAML input shares (harness/yaml/strict_yaml.hpp): limits that
// keep a hostile file from overflowing the stack or exploding a walk, duplicate keys at any
// depth, leading zeros, did-you-mean, FILE:LINE:COL.
#include "harness/yaml/strict_yaml.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hy = harness::yaml;
using ::testing::HasSubstr;

namespace {

std::string error_of(const std::string& text, const hy::Limits& limits = {}) {
  try {
    hy::parse(text, "f.yaml", limits);
  } catch (const hy::InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST(StrictYaml, DeepNestingIsRefusedBeforeAnyWalkCanOverflow) {
  // Far beyond yaml-cpp's own guard (2000 levels): refused as a syntax error, no crash.
  EXPECT_THAT(error_of(std::string(100000, '[')), HasSubstr("f.yaml:1:"));
  // Within yaml-cpp's guard, beyond ours (32): refused by depth.
  std::string deep = std::string(40, '[') + std::string(40, ']');
  EXPECT_THAT(error_of(deep), HasSubstr("nested deeper than 32 levels: refused"));
  std::string ok = std::string(30, '[') + std::string(30, ']');
  EXPECT_EQ(error_of(ok), "(accepted)");
  std::string maps;
  for (int i = 0; i < 40; ++i) maps += "{a: ";
  maps += "1" + std::string(40, '}');
  EXPECT_THAT(error_of(maps), HasSubstr("field a.a.a."));
}

TEST(StrictYaml, OversizedTextIsRefusedUnparsed) {
  hy::Limits l;
  l.max_bytes = 64;
  EXPECT_EQ(error_of(std::string(65, '#'), l), "f.yaml: 65 bytes, more than the 64 a YAML input may have: refused");
  EXPECT_EQ(error_of(std::string(64, '#'), l), "(accepted)");
}

TEST(StrictYaml, AliasBombIsRefusedByTheNodeBudget) {
  // Each level refers to the previous one ten times: 10^7 nodes when walked, a few hundred bytes of text.
  std::string t = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 7; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    t += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p;
    for (int k = 1; k < 10; ++k) t += ", " + p;
    t += "]\n";
  }
  EXPECT_THAT(error_of(t), HasSubstr("more than 100000 YAML nodes (aliases count every time they are used): refused"));
}

TEST(StrictYaml, DuplicateKeysAnywhereNameBothPlaces) {
  EXPECT_EQ(error_of("a: 1\nb:\n  - {c: 1, c: 2}\n"), "f.yaml:3:12: field b[0].c: duplicate key (first given at f.yaml:3:6)");
  EXPECT_EQ(error_of("a: 1\na: 1\n"), "f.yaml:2:1: field a: duplicate key (first given at f.yaml:1:1)");
}

TEST(StrictYaml, SyntaxErrorsNameLineAndColumn) {
  EXPECT_THAT(error_of("a: [1, 2\nb: 3\n"), HasSubstr("f.yaml:"));
  EXPECT_THAT(error_of("a: [1, 2\nb: 3\n"), HasSubstr(": YAML syntax: "));
  EXPECT_EQ(hy::parse("", "f.yaml").IsNull(), true);
}

TEST(StrictYaml, SectionRefusesLeadingZerosUnknownKeysAndNamesTypos) {
  const auto root = hy::parse("top:\n  count: 0300\n  naem: x\n  ratio: 00.5\n  ok: 7\n", "f.yaml");
  hy::Section top(root, "", "f.yaml");
  hy::Section s = top.child("top");
  try {
    s.scalar<int>("count");
    ADD_FAILURE() << "leading zero accepted";
  } catch (const hy::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "f.yaml:2:10: field top.count: '0300' has a leading zero (YAML 1.1 would read it "
                                     "as octal); write it without");
  }
  EXPECT_THROW(s.scalar<double>("ratio"), hy::InputError);
  EXPECT_EQ(s.scalar<int>("ok"), 7);
  try {
    s.scalar<std::string>("name");
    ADD_FAILURE() << "missing key accepted";
  } catch (const hy::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.yaml:3:3: field top.naem: unknown key (did you mean 'name'? it is required and missing)");
  }
  EXPECT_TRUE(hy::has_leading_zero("-012"));
  EXPECT_FALSE(hy::has_leading_zero("0"));
  EXPECT_FALSE(hy::has_leading_zero("0.5"));
  EXPECT_FALSE(hy::has_leading_zero("120"));
  EXPECT_EQ(hy::edit_distance("hosts_fil", "hosts_file"), 1u);
}

TEST(StrictYaml, FinishSuggestsTheNearestKnownKey) {
  const auto root = hy::parse("fresh_guest_per_cas: true\nkind: x\nzzz: 1\n", "f.yaml");
  hy::Section s(root, "provider", "f.yaml");
  EXPECT_EQ(s.scalar<std::string>("kind"), "x");
  EXPECT_TRUE(s.scalar<bool>("fresh_guest_per_case", true));
  try {
    s.finish();
    ADD_FAILURE() << "unknown key accepted";
  } catch (const hy::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.yaml:1:1: field provider.fresh_guest_per_cas: unknown key (did you mean 'fresh_guest_per_case'?)");
  }
}

// The one did-you-mean rule (harness/yaml/did_you_mean.hpp): the nearest name within edit
// distance 2, else a name typed short (a prefix within 2, typed names of 4 characters or more).
TEST(DidYouMean, NearestNameThenAShortSpelling) {
  const std::vector<std::string> detectors{"mem_available", "memory_current", "psi", "psi_window_trigger", "refaults", "timer"};
  EXPECT_EQ(hy::nearest_name("timr", detectors), "timer");
  EXPECT_EQ(hy::nearest_name("psi_windw", detectors), "psi_window_trigger");  // issue 59: no suggestion before
  EXPECT_EQ(hy::nearest_name("memory_cur", detectors), "memory_current");
  EXPECT_EQ(hy::nearest_name("ps", detectors), "psi");  // within 2 of the whole name
  EXPECT_EQ(hy::nearest_name("swapon", detectors), "");
  EXPECT_EQ(hy::nearest_name("ref", std::vector<std::string>{"refaults_per_window"}), "");  // short names: no prefix guess
  EXPECT_EQ(hy::prefix_distance("psi_windw", "psi_window_trigger"), 1u);
  EXPECT_EQ(hy::edit_distance("psi_windw", "psi_window_trigger"), 9u);
  EXPECT_EQ(hy::did_you_mean("senpi", std::vector<std::string>{"senpai"}), " (did you mean 'senpai'?)");
}

TEST(StrictYaml, ReadTextRefusesWhatItCannotOpen) {
  try {
    hy::read_text("/nonexistent/x.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const hy::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/x.yaml: cannot open");
  }
}
