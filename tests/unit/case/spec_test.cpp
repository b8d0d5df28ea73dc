// Case spec parsing and the "refused before anything is created" rules (SPEC.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/case/spec/spec_writer.hpp"
#include "tests/common/slurp.hpp"

using harness::case_::parse_spec;
using harness::case_::SpecError;
using json = nlohmann::json;

namespace {
const char* kStudySpec = "tests/unit/case/fixtures/spec-study.json";

json study() {
  return json::parse(test_support::slurp(kStudySpec));
}

/// Parses `j`, expects a SpecError naming `field`, returns its message.
std::string refused_field(const json& j, const std::string& field) {
  try {
    parse_spec(j.dump(), "spec.json");
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("spec.json"), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "spec was accepted, expected refusal naming " << field;
  return "";
}
}  // namespace

TEST(CaseSpec, StudySpecParses) {
  auto s = harness::case_::load_spec_file(kStudySpec);
  EXPECT_EQ(s.case_id, "smoke-vm0-fast-structured-r1-bounded-reclaim");
  EXPECT_EQ(s.configuration, "bounded-reclaim");
  ASSERT_TRUE(s.dose_bytes);
  EXPECT_EQ(*s.dose_bytes, 96ll << 20);
  EXPECT_EQ(s.phases.warmup_s, 120);
  EXPECT_EQ(s.phases.pressure_s, 300);
  EXPECT_EQ(s.phases.recovery_s, 120);
  EXPECT_EQ(s.cgroups.parent, "harness");
  EXPECT_EQ(s.cgroups.bg_memory_max_bytes, 300ll << 20);
  EXPECT_FALSE(s.cgroups.bg_memory_high_bytes);
  EXPECT_EQ(s.backend.zram_priority, 100);
  EXPECT_EQ(s.backend.swapfile_priority, 10);
  EXPECT_EQ(s.pressure.allocation_bytes, 600ll << 20);
  EXPECT_DOUBLE_EQ(s.pressure.rate_mib_s, 32.0);
  EXPECT_EQ(s.canaries.period_ms, 100);
  EXPECT_EQ(s.trigger.window_ms, 1000);
  EXPECT_EQ(s.trigger.min_increase_us, 1000);
  EXPECT_EQ(s.trigger.consecutive_windows, 3);
  EXPECT_EQ(s.raw, study());
}

TEST(CaseSpec, TriggerDefaultsToTheStudy) {
  auto j = study();
  j.erase("trigger");
  j.erase("telemetry_period_ms");
  j.erase("restoration_timeout_s");
  auto s = parse_spec(j.dump(), "spec.json");
  EXPECT_EQ(s.trigger.window_ms, 1000);
  EXPECT_EQ(s.trigger.min_increase_us, 1000);
  EXPECT_EQ(s.trigger.consecutive_windows, 3);
  EXPECT_EQ(s.telemetry_period_ms, 1000);
  EXPECT_EQ(s.restoration_timeout_s, 120);
  j["trigger"] = {{"min_increase_us", 2000}};
  s = parse_spec(j.dump(), "spec.json");
  EXPECT_EQ(s.trigger.min_increase_us, 2000);
  EXPECT_EQ(s.trigger.consecutive_windows, 3);
}

TEST(CaseSpec, MalformedJsonIsRefused) {
  try {
    parse_spec("{\"case_id\": ", "bad.json");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos);
  }
}

TEST(CaseSpec, UnknownAndMissingFieldsAreNamed) {
  auto j = study();
  j["pressure"]["rate"] = 3;
  refused_field(j, "pressure.rate");
  j = study();
  j["extra"] = 1;
  refused_field(j, "extra");
  j = study();
  j["cgroups"].erase("bg_memory_max_bytes");
  refused_field(j, "cgroups.bg_memory_max_bytes");
  j = study();
  j["repeat"] = "one";
  refused_field(j, "repeat");
}

// No bg limit (a cold-memory regime, docs/CAMPAIGN.md "regimes"): cgroups.bg_memory_max_bytes
// null. The allocation need not exceed a limit, but must fit in the VM and leave memory outside
// the active set (what goes cold); the study's dose has no limit to stay below. The writer
// writes the null back.
TEST(CaseSpec, NoBgLimitIsNullWithItsOwnRules) {
  auto j = study();
  j["cgroups"]["bg_memory_max_bytes"] = nullptr;
  j["pressure"]["allocation_bytes"] = 256ll << 20;
  j["pressure"]["active_set_bytes"] = 96ll << 20;
  j["pressure"]["active_set_slide_mib_s"] = 0;
  const auto s = parse_spec(j.dump(), "spec.json");
  EXPECT_FALSE(s.cgroups.bg_memory_max_bytes);
  EXPECT_EQ(s.pressure.allocation_bytes, 256ll << 20);
  EXPECT_EQ(*s.dose_bytes, 96ll << 20);
  const json back = harness::case_::spec_json(s);
  EXPECT_TRUE(back.at("cgroups").contains("bg_memory_max_bytes"));
  EXPECT_TRUE(back.at("cgroups").at("bg_memory_max_bytes").is_null());
  EXPECT_EQ(parse_spec(back.dump(), "back.json").pressure.active_set_slide_mib_s, 0);
  // Below the study's limit (300 MiB) is no longer a rule; the VM's memory is.
  j["pressure"]["allocation_bytes"] = 1024ll << 20;
  auto msg = refused_field(j, "pressure.allocation_bytes");
  EXPECT_NE(msg.find("vm_shape.memory_mib (1024 MiB)"), std::string::npos) << msg;
  j["pressure"]["allocation_bytes"] = 96ll << 20;  // all of it active: nothing cold
  msg = refused_field(j, "pressure.active_set_bytes");
  EXPECT_NE(msg.find("only the memory outside the active set is cold"), std::string::npos) << msg;
  j["cgroups"]["bg_memory_max_bytes"] = 4095;
  refused_field(j, "cgroups.bg_memory_max_bytes");
}

TEST(CaseSpec, DoseLargerThanBgLimitIsImpossible) {
  auto j = study();
  j["dose_bytes"] = 400ll << 20;  // > 300 MiB limit
  auto msg = refused_field(j, "dose_bytes");
  EXPECT_NE(msg.find("bg_memory_max_bytes"), std::string::npos);
  j["dose_bytes"] = 300ll << 20;  // equal is impossible too
  refused_field(j, "dose_bytes");
  j["dose_bytes"] = 0;
  refused_field(j, "dose_bytes");
  j.erase("dose_bytes");
  refused_field(j, "dose_bytes");
}

TEST(CaseSpec, DoseIsOptionalForComparators) {
  auto j = study();
  j["configuration"] = "static-zram";
  j.erase("dose_bytes");
  auto s = parse_spec(j.dump(), "spec.json");
  EXPECT_EQ(s.configuration, "static-zram");
  EXPECT_FALSE(s.dose_bytes);
  j["configuration"] = "delayed-activation";
  EXPECT_EQ(parse_spec(j.dump(), "spec.json").configuration, "delayed-activation");
  j["configuration"] = "dynamic";
  refused_field(j, "configuration");
}

TEST(CaseSpec, ZeroLengthPhasesAreImpossible) {
  for (const char* p : {"warmup", "pressure", "recovery"}) {
    auto j = study();
    j["phases_s"][p] = 0;
    refused_field(j, std::string("phases_s.") + p);
    j["phases_s"][p] = -5;
    refused_field(j, std::string("phases_s.") + p);
  }
}

TEST(CaseSpec, OtherImpossibleValues) {
  auto j = study();
  j["pressure"]["allocation_bytes"] = 300ll << 20;  // not larger than the bg limit
  refused_field(j, "pressure.allocation_bytes");
  j = study();
  j["pressure"]["active_set_bytes"] = 700ll << 20;
  refused_field(j, "pressure.active_set_bytes");
  j = study();
  j["pressure"]["allocation_bytes"] = (600ll << 20) + 1;  // not whole MiB
  refused_field(j, "pressure.allocation_bytes");
  j = study();
  j["trigger"]["consecutive_windows"] = 0;
  refused_field(j, "trigger.consecutive_windows");
  j = study();
  j["trigger"]["min_increase_us"] = 0;
  refused_field(j, "trigger.min_increase_us");
  j = study();
  j["telemetry_period_ms"] = 500;
  refused_field(j, "telemetry_period_ms");
  j = study();
  j["backend"]["swapfile_priority"] = 100;
  refused_field(j, "backend.swapfile_priority");
  j = study();
  j["cgroups"]["parent"] = "../etc";
  refused_field(j, "cgroups.parent");
  j = study();
  j["case_id"] = "..";
  refused_field(j, "case_id");
  j = study();
  j["pinned_commit"] = "abc";
  refused_field(j, "pinned_commit");
}

// No unquoted input in printed commands: host paths are restricted to [A-Za-z0-9._/-],
// absolute, without "." or ".." components; the error names the field and the offending
// character.
TEST(CaseSpec, HostPathsMustBeSafeAbsolutePaths) {
  struct Bad {
    const char* path;
    const char* why;
  };
  for (const char* field : {"backend.swapfile_path", "canaries.sqlite_db_path"}) {
    SCOPED_TRACE(field);
    const std::string sect = std::string(field).substr(0, std::string(field).find('.'));
    const std::string key = std::string(field).substr(sect.size() + 1);
    for (const Bad& b : {Bad{"/var/lib/harness/swapfile; rm -rf /", "contains ';' at offset 25"},
                         Bad{"/var/lib/my swap", "contains byte 0x20 at offset 11"},
                         Bad{"/var/lib/$(id)", "contains '$' at offset 9"},
                         Bad{"/var/lib/`id`", "contains '`' at offset 9"},
                         Bad{"/var/lib/a'b", "contains ''' at offset 10"},
                         Bad{"/var/lib/\nx", "contains byte 0x0a at offset 9"},
                         Bad{"relative/swapfile", "must be an absolute path"},
                         Bad{"/var/lib/../../etc/passwd", "must not contain a '..' component"},
                         Bad{"/var/./lib", "must not contain a '.' component"}}) {
      auto j = study();
      j[sect][key] = b.path;
      const std::string msg = refused_field(j, field);
      EXPECT_NE(msg.find(b.why), std::string::npos) << msg;
    }
    auto ok = study();
    ok[sect][key] = "/srv/harness-2/data_v1.0/file";
    EXPECT_NO_THROW(parse_spec(ok.dump(), "spec.json"));
  }
  EXPECT_TRUE(harness::case_::check_safe_path("/var/lib/harness/swapfile"));
  EXPECT_TRUE(harness::case_::check_safe_path("/a/..b/c."));  // dots inside a name are fine
  EXPECT_FALSE(harness::case_::check_safe_path(""));
  EXPECT_FALSE(harness::case_::check_safe_path("/" + std::string(4096, 'a')));
}

// The parent cgroup is one the harness creates: "harness" or "harness-<suffix>", never an
// existing cgroup of the VM (the executor kills every process in its parent).
TEST(CaseSpec, ParentCgroupMustBeHarnessOwned) {
  for (const char* p : {"system.slice", "user.slice", "init.scope", "harness.slice", "harnessx", "harness-", "x"}) {
    auto j = study();
    j["cgroups"]["parent"] = p;
    const std::string msg = refused_field(j, "cgroups.parent");
    EXPECT_NE(msg.find("only the harness creates"), std::string::npos) << p << ": " << msg;
  }
  for (const char* p : {"harness", "harness-ab", "harness-vm0_2"}) {
    auto j = study();
    j["cgroups"]["parent"] = p;
    EXPECT_NO_THROW(parse_spec(j.dump(), "spec.json")) << p;
  }
}

// Size and depth limits hold before the document is copied (a 100,000-deep array used to
// overflow the stack), and malformed JSON of every kind is a SpecError, not another exception.
TEST(CaseSpec, DeepOrMalformedJsonIsASpecError) {
  std::string deep = study().dump();
  deep.replace(deep.find("\"campaign\":") + 11, 0, std::string(100000, '[') + std::string(100000, ']') + ",\"x\":");
  try {
    parse_spec(deep, "deep.json");
    ADD_FAILURE() << "a 100,000-deep document was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("deep.json: JSON nests arrays/objects deeper than 64 levels (limit 64)"),
              std::string::npos)
        << e.what();
  }
  std::string big = study().dump();
  big.replace(big.find("\"repeat\":") + 9, 1, "1e400");
  EXPECT_THROW(parse_spec(big, "spec.json"), SpecError);
  std::string utf = study().dump();
  utf.replace(utf.find("\"campaign\":\"") + 12, 0, "\xff");
  try {
    parse_spec(utf, "spec.json");
    ADD_FAILURE() << "invalid UTF-8 was accepted";
  } catch (const SpecError& e) {
    EXPECT_TRUE(json::accept(json(std::string(e.what())).dump())) << "the message must be printable as JSON";
    EXPECT_EQ(std::string(e.what()).find('\xff'), std::string::npos) << "raw input bytes in the message";
  }
}

TEST(CaseSpec, DelayedSwapfileIsActiveWhenAbsentOffWhenSaidAndNothingElse) {
  auto j = study();
  EXPECT_EQ(parse_spec(j.dump(), "spec.json").backend.delayed_swapfile, harness::case_::DelayedSwapfile::Active);
  j["backend"]["delayed_swapfile"] = "active";
  EXPECT_EQ(parse_spec(j.dump(), "spec.json").backend.delayed_swapfile, harness::case_::DelayedSwapfile::Active);
  j["backend"]["delayed_swapfile"] = "off";
  EXPECT_EQ(parse_spec(j.dump(), "spec.json").backend.delayed_swapfile, harness::case_::DelayedSwapfile::Off);
  j["backend"]["delayed_swapfile"] = "disk";
  const auto msg = refused_field(j, "backend.delayed_swapfile");
  EXPECT_NE(msg.find("is not one of active, off"), std::string::npos) << msg;
  j["backend"]["delayed_swapfile"] = 0;
  refused_field(j, "backend.delayed_swapfile");
}

// ---- the arm's policy (policy.hpp; SPEC.md "policy") ---------------------------------

namespace {
/// The study spec as an arm `name` that names its policy in the spec.
json arm_spec(const std::string& name, const json& policy) {
  auto j = study();
  j["configuration"] = name;
  j.erase("dose_bytes");
  j["policy"] = policy;
  return j;
}
}  // namespace

// A long value the spec quotes (an unknown key, a configuration that is no arm name, a
// delayed_swapfile, a policy name or parameter) is quoted as its first 64 bytes and its
// length, in the field and the message alike: the error stays short whatever the spec holds.
TEST(CaseSpec, LongValuesAreQuotedAsExcerptsWithTheirLength) {
  const std::string k = "k" + std::string(4999, 'x');
  const std::string shown = "k" + std::string(63, 'x') + "... (5000 bytes)";
  auto j = study();
  j["backend"][k] = 1;
  std::string why = refused_field(j, "backend." + shown);
  EXPECT_LT(why.size(), 200u) << why;
  j = study();
  j["configuration"] = k;
  why = refused_field(j, "configuration");
  EXPECT_NE(why.find("'" + shown + "' is not an arm name"), std::string::npos) << why;
  j = study();
  j["backend"]["delayed_swapfile"] = k;
  why = refused_field(j, "backend.delayed_swapfile");
  EXPECT_NE(why.find("'" + shown + "' is not one of active, off"), std::string::npos) << why;
  why = refused_field(arm_spec("s", {{"name", k}}), "policy.name");
  EXPECT_NE(why.find("'" + shown + "' is not a registered policy"), std::string::npos) << why;
  why = refused_field(arm_spec("s", {{"name", "senpai"}, {"params", {{k, 1}}}}), "policy.params." + shown);
  EXPECT_NE(why.find("'" + shown + "' is not a parameter of"), std::string::npos) << why;
  EXPECT_LT(why.size(), 400u) << why;
}

TEST(CaseSpecPolicy, AStudyArmWithoutPolicyIsItsOwnPolicyWithTheStudyParameters) {
  // bounded-reclaim: the dose comes from dose_bytes (96 MiB, whole MiB: an integer).
  auto s = harness::case_::load_spec_file(kStudySpec);
  EXPECT_EQ(s.policy, "bounded-reclaim");
  EXPECT_FALSE(s.policy_in_spec);
  EXPECT_EQ(s.policy_params, json({{"dose_mib", 96}}));
  EXPECT_TRUE(s.policy_params.at("dose_mib").is_number_integer());
  auto j = study();
  j["configuration"] = "static-zram";
  s = parse_spec(j.dump(), "spec.json");
  EXPECT_EQ(s.policy, "static-zram");
  EXPECT_EQ(s.policy_params, json::object());
  EXPECT_FALSE(s.policy_in_spec);
  // Every study arm parses by name alone (the dose is there for the one that takes it).
  for (const auto& arm : harness::case_::study_arms()) {
    j["configuration"] = arm;
    EXPECT_EQ(parse_spec(j.dump(), "spec.json").policy, arm);
  }
}

TEST(CaseSpecPolicy, AnArmThatIsNotAStudyArmMustNameItsPolicy) {
  auto j = study();
  j["configuration"] = "senpai-fast";
  auto msg = refused_field(j, "configuration");
  EXPECT_NE(msg.find("policy"), std::string::npos) << msg;
  // A registered policy that is not a study arm is not an arm by name either.
  j["configuration"] = "senpai";
  refused_field(j, "configuration");
  // Not an arm name at all.
  j["configuration"] = "Senpai_1";
  refused_field(j, "configuration");
}

TEST(CaseSpecPolicy, NamedPolicyParsesWithDefaultsFilled) {
  auto s = parse_spec(arm_spec("senpai-3s", {{"name", "senpai"}, {"params", {{"interval_s", 3}}}}).dump(), "spec.json");
  EXPECT_EQ(s.configuration, "senpai-3s");
  EXPECT_EQ(s.policy, "senpai");
  EXPECT_TRUE(s.policy_in_spec);
  EXPECT_EQ(s.policy_params.at("interval_s"), 3);
  EXPECT_DOUBLE_EQ(s.policy_params.at("ratio").get<double>(), 0.0005);
  EXPECT_DOUBLE_EQ(s.policy_params.at("target").get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(s.policy_params.at("max_step").get<double>(), 1.0);
  // No params at all: every default.
  s = parse_spec(arm_spec("loop", {{"name", "bounded-loop"}}).dump(), "spec.json");
  EXPECT_EQ(s.policy_params, json({{"step_mib", 32}, {"total_cap_mib", 96}}));
  // A study policy under another arm name, with its own parameters.
  s = parse_spec(arm_spec("reclaim-32", {{"name", "bounded-reclaim"}, {"params", {{"dose_mib", 32}}}}).dump(), "spec.json");
  EXPECT_EQ(s.policy, "bounded-reclaim");
  EXPECT_EQ(s.policy_params, json({{"dose_mib", 32}}));
}

TEST(CaseSpecPolicy, UnknownPolicyIsRefusedWithTheRegisteredNames) {
  auto msg = refused_field(arm_spec("psi-paced", {{"name", "psi-paced-reclaim"}}), "policy.name");
  EXPECT_NE(msg.find("psi-paced-reclaim"), std::string::npos) << msg;
  EXPECT_NE(msg.find(harness::case_::policy_names()), std::string::npos) << msg;
  refused_field(arm_spec("x", {{"params", json::object()}}), "policy.name");
  refused_field(arm_spec("x", {{"name", "senpai"}, {"knob", 1}}), "policy.knob");
}

TEST(CaseSpecPolicy, UnknownParameterIsNamed) {
  auto msg = refused_field(arm_spec("s", {{"name", "senpai"}, {"params", {{"interval", 6}}}}), "policy.params.interval");
  EXPECT_NE(msg.find("interval_s"), std::string::npos) << "lists the policy's parameters: " << msg;
  refused_field(arm_spec("s", {{"name", "static-zram"}, {"params", {{"dose_mib", 96}}}}), "policy.params.dose_mib");
  refused_field(arm_spec("s", {{"name", "senpai"}, {"params", json::array({1})}}), "policy.params");
}

// The policy's settings rules (policy.hpp settings_check) hold for a spec as they do for a
// campaign: the study spec's bg limit is 300 MiB and its pressure phase 300 s.
TEST(CaseSpecPolicy, ParametersAreCheckedAgainstTheCaseSettings) {
  auto msg = refused_field(arm_spec("r", {{"name", "bounded-reclaim"}, {"params", {{"dose_mib", 300}}}}),
                           "policy.params.dose_mib");
  EXPECT_NE(msg.find("bg_memory_max_mib"), std::string::npos) << msg;
  msg = refused_field(arm_spec("s", {{"name", "senpai"}, {"params", {{"interval_s", 301}}}}), "policy.params.interval_s");
  EXPECT_NE(msg.find("pressure"), std::string::npos) << msg;
  refused_field(arm_spec("l", {{"name", "bounded-loop"}, {"params", {{"step_mib", 16}, {"total_cap_mib", 400}}}}),
                "policy.params.total_cap_mib");
  // Within the settings: parses.
  EXPECT_EQ(parse_spec(arm_spec("r", {{"name", "bounded-reclaim"}, {"params", {{"dose_mib", 299}}}}).dump(), "spec.json")
                .policy_params.at("dose_mib"),
            299);
}

TEST(CaseSpecPolicy, WrongTypeIsNamed) {
  refused_field(arm_spec("s", {{"name", "senpai"}, {"params", {{"interval_s", "6"}}}}), "policy.params.interval_s");
  refused_field(arm_spec("m", {{"name", "memflux-guard"}, {"params", {{"interval_ms", 1000.5}}}}),
                "policy.params.interval_ms");
  refused_field(arm_spec("l", {{"name", "bounded-loop"}, {"params", {{"step_mib", true}}}}), "policy.params.step_mib");
}

TEST(CaseSpecPolicy, OutOfBoundsIsNamedWithTheBound) {
  auto msg = refused_field(arm_spec("s", {{"name", "senpai"}, {"params", {{"interval_s", 0}}}}), "policy.params.interval_s");
  EXPECT_NE(msg.find("minimum"), std::string::npos) << msg;
  msg = refused_field(arm_spec("h", {{"name", "memory-high"}, {"params", {{"fraction", 1.5}}}}), "policy.params.fraction");
  EXPECT_NE(msg.find("maximum"), std::string::npos) << msg;
  refused_field(arm_spec("r", {{"name", "bounded-reclaim"}, {"params", {{"dose_mib", 0}}}}), "policy.params.dose_mib");
  // A required parameter left out is named too.
  refused_field(arm_spec("r", {{"name", "bounded-reclaim"}}), "policy.params.dose_mib");
}

TEST(CaseSpecPolicy, RoundTripThroughTheWriter) {
  const auto j = arm_spec("senpai-3s", {{"name", "senpai"}, {"params", {{"interval_s", 3}, {"ratio", 0.001}}}});
  const auto a = parse_spec(j.dump(), "spec.json");
  const json written = harness::case_::spec_json(a);
  ASSERT_TRUE(written.contains("policy"));
  EXPECT_EQ(written.at("policy").at("name"), "senpai");
  EXPECT_EQ(written.at("policy").at("params"), a.policy_params);  // defaults written out
  const auto b = parse_spec(written.dump(), "spec.json");
  EXPECT_EQ(b.configuration, a.configuration);
  EXPECT_EQ(b.policy, a.policy);
  EXPECT_EQ(b.policy_params, a.policy_params);
  EXPECT_TRUE(b.policy_in_spec);
  EXPECT_EQ(harness::case_::spec_json(b), written);
  // A study arm by name is written without `policy` (its plan hash is kept).
  const json study_written = harness::case_::spec_json(harness::case_::load_spec_file(kStudySpec));
  EXPECT_FALSE(study_written.contains("policy"));
}

// The agent's path check: symlinks are followed for what exists, a new file under a
// symlinked directory is judged where it would be created, and a dangling symlink is refused.
TEST(CaseSpec, PathCheckFollowsSymlinksAndRefusesDanglingOnes) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("path-check-" + std::to_string(getpid()));
  fs::remove_all(root);
  const fs::path data = root / "data", outside = root / "outside";
  fs::create_directories(data / "real");
  fs::create_directories(outside);
  fs::create_directory_symlink(outside, data / "to-outside");
  fs::create_directory_symlink(data / "real", data / "to-real");
  fs::create_symlink(root / "nowhere" / "x", data / "dangling");
  const std::vector<std::string> allowed{data.string()};
  using harness::case_::check_path_inside;
  EXPECT_TRUE(check_path_inside((data / "real" / "new.db").string(), allowed));
  EXPECT_TRUE(check_path_inside((data / "to-real" / "new.db").string(), allowed));
  EXPECT_TRUE(check_path_inside((data / "new.db").string(), allowed));
  const auto under_link = check_path_inside((data / "to-outside" / "new.db").string(), allowed);
  ASSERT_FALSE(under_link) << "a new file under a directory symlinked outside passed";
  EXPECT_NE(under_link.error().message.find("outside the allowed"), std::string::npos) << under_link.error().message;
  const auto dangling = check_path_inside((data / "dangling").string(), allowed);
  ASSERT_FALSE(dangling) << "a dangling symlink passed";
  EXPECT_NE(dangling.error().message.find("dangling"), std::string::npos) << dangling.error().message;
  const auto through = check_path_inside((data / "dangling" / "y").string(), allowed);
  ASSERT_FALSE(through) << "a path through a dangling symlink passed";
  EXPECT_FALSE(check_path_inside((outside / "x.db").string(), allowed));
  fs::remove_all(root);
}
