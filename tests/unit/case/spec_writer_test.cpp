// The case-spec writer (harness/case/spec/spec_writer.hpp) is the inverse of parse_spec: what it
// writes parses, and writing the parsed spec again gives the same document; defaults are
// written out; absent optionals are null or left out as SPEC.md says.
#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/case/spec/spec_writer.hpp"

#include <gtest/gtest.h>

namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

/// A local-guest case with every size set, as the vm tests and calibrate build one.
harness::case_::CaseSpec sized(const std::string& study_arm) {
  harness::case_::CaseSpec s = harness::case_::local_guest_case("w-1", "writer", study_arm);
  s.regime = "fast-random";
  s.phases = {5, 30, 5};
  s.cgroups.bg_memory_max_bytes = 300 * kMiB;
  s.backend.zram_disksize_bytes = 512 * kMiB;
  s.pressure.allocation_bytes = 400 * kMiB;
  s.pressure.rate_mib_s = 64;
  s.pressure.active_set_bytes = 64 * kMiB;
  s.pressure.contents = "random";
  return s;
}

}  // namespace

TEST(SpecWriter, LocalGuestCaseParsesAndWritesItselfAgain) {
  const auto j = harness::case_::spec_json(sized("static-zram"));
  const auto parsed = harness::case_::parse_spec(j.dump(), "writer");
  EXPECT_EQ(harness::case_::spec_json(parsed), j);
  EXPECT_EQ(parsed.backend.swapfile_path, "/var/lib/harness/swapfile");
  EXPECT_EQ(parsed.canaries.sqlite_db_path, "/var/lib/harness/canary.db");
  EXPECT_EQ(parsed.pressure.allocation_bytes, 400 * kMiB);
  EXPECT_EQ(parsed.pressure.contents, "random");
  EXPECT_FALSE(j.contains("triplet_id"));
  EXPECT_FALSE(j.contains("dose_bytes"));
  EXPECT_FALSE(j.contains("variant"));
}

TEST(SpecWriter, DefaultsAreWrittenOut) {
  const auto j = harness::case_::spec_json(sized("static-zram"));
  EXPECT_EQ(j.at("trigger").at("window_ms"), 1000);
  EXPECT_EQ(j.at("trigger").at("min_increase_us"), 1000);
  EXPECT_EQ(j.at("trigger").at("consecutive_windows"), 3);
  EXPECT_EQ(j.at("telemetry_offset_ms"), 25);
  EXPECT_EQ(j.at("canaries").at("sqlite_offset_ms"), 50);
  EXPECT_EQ(j.at("restoration_timeout_s"), 120);
  EXPECT_DOUBLE_EQ(j.at("pressure").at("active_set_slide_mib_s").get<double>(), harness::case_::kDefaultActiveSetSlideMibS);
  EXPECT_TRUE(j.at("cgroups").at("bg_memory_high_bytes").is_null());
  EXPECT_TRUE(j.at("cgroups").at("fg_memory_low_bytes").is_null());
}

TEST(SpecWriter, EveryOptionalFieldSurvivesARoundTrip) {
  harness::case_::CaseSpec s = sized("bounded-reclaim");
  s.triplet_id = "vm0/fast-random/1";
  s.dose_bytes = 96 * kMiB;
  s.policy_params = {{"dose_mib", 96}};
  s.cgroups.bg_memory_high_bytes = 280 * kMiB;
  s.cgroups.fg_memory_max_bytes = 400 * kMiB;
  s.cgroups.fg_memory_low_bytes = 64 * kMiB;
  s.pressure.active_set_slide_mib_s = 0;  // v1: the first active_set bytes
  s.trigger = {500, 2000, 4};
  s.telemetry_period_ms = 500;
  s.telemetry_offset_ms = 10;
  s.restoration_timeout_s = 300;
  const harness::case_::VariantSpec v{"candidate",       "vm0/fast-random/1/bounded-reclaim", {{"vm.swappiness", "200"}},
                             {{"/sys/kernel/mm/lru_gen/enabled", "y"}}, {"transparent_hugepage=never"},
                             "6.1.0-50-cloud-amd64", "/images/next"};
  s.variant = v;
  const auto j = harness::case_::spec_json(s);
  const auto p = harness::case_::parse_spec(j.dump(), "writer");
  EXPECT_EQ(harness::case_::spec_json(p), j);
  EXPECT_EQ(p.triplet_id, s.triplet_id);
  EXPECT_EQ(p.dose_bytes, s.dose_bytes);
  EXPECT_EQ(p.cgroups.bg_memory_high_bytes, s.cgroups.bg_memory_high_bytes);
  EXPECT_EQ(p.cgroups.fg_memory_max_bytes, s.cgroups.fg_memory_max_bytes);
  EXPECT_EQ(p.cgroups.fg_memory_low_bytes, s.cgroups.fg_memory_low_bytes);
  EXPECT_EQ(p.pressure.active_set_slide_mib_s, 0.0);
  EXPECT_EQ(p.trigger.window_ms, 500);
  EXPECT_EQ(p.trigger.min_increase_us, 2000);
  EXPECT_EQ(p.trigger.consecutive_windows, 4);
  EXPECT_EQ(p.telemetry_offset_ms, 10);
  EXPECT_EQ(p.restoration_timeout_s, 300);
  ASSERT_TRUE(p.variant);
  EXPECT_EQ(p.variant->sysctls, v.sysctls);
  EXPECT_EQ(p.variant->sysfs, v.sysfs);
  EXPECT_EQ(p.variant->cmdline, v.cmdline);
  EXPECT_EQ(p.variant->kernel_release, v.kernel_release);
  EXPECT_EQ(p.variant->kernel_image_dir, v.kernel_image_dir);
}

TEST(SpecWriter, ConfigurationNamesRoundTrip) {
  // Every study arm is written under its name and read back as that arm and its policy.
  ASSERT_FALSE(harness::case_::study_arms().empty());
  for (const auto& arm : harness::case_::study_arms()) {
    harness::case_::CaseSpec s = sized(arm);
    s.dose_bytes = 96 * kMiB;  // read only by the arm that takes the study's dose
    const auto j = harness::case_::spec_json(s);
    EXPECT_EQ(j.at("configuration"), arm);
    EXPECT_FALSE(j.contains("policy")) << arm;
    const auto p = harness::case_::parse_spec(j.dump(), "writer");
    EXPECT_EQ(p.configuration, arm);
    EXPECT_EQ(p.policy, arm);
  }
  // A name that is no study arm (and names no policy) is refused, as is no name.
  for (const char* bad : {"static", ""}) {
    auto j = harness::case_::spec_json(sized("static-zram"));
    j["configuration"] = bad;
    try {
      harness::case_::parse_spec(j.dump(), "writer");
      ADD_FAILURE() << "accepted configuration '" << bad << "'";
    } catch (const harness::case_::SpecError& e) {
      EXPECT_EQ(e.field(), "configuration") << e.what();
    }
  }
  EXPECT_FALSE(harness::case_::check_arm_name(""));
  EXPECT_TRUE(harness::case_::check_arm_name("static"));  // a well-formed arm name, only not a study arm
}

TEST(SpecWriter, ANamedPolicyIsWrittenAndReadBack) {
  harness::case_::CaseSpec s = sized("static-zram");
  s.configuration = "loop-16";
  s.policy = "bounded-loop";
  s.policy_in_spec = true;
  s.policy_params = harness::case_::validate_params(*harness::case_::find_policy("bounded-loop"), {{"step_mib", 16}});
  const auto j = harness::case_::spec_json(s);
  EXPECT_EQ(j.at("policy"), nlohmann::json({{"name", "bounded-loop"}, {"params", {{"step_mib", 16}, {"total_cap_mib", 96}}}}));
  const auto p = harness::case_::parse_spec(j.dump(), "writer");
  EXPECT_EQ(p.policy, "bounded-loop");
  EXPECT_EQ(p.policy_params, s.policy_params);
  EXPECT_EQ(harness::case_::spec_json(p), j);
}
