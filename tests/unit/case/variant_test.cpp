// The A/B variant of a case (harness/case/spec/variant.hpp, SPEC.md "variant") over a small
// fixture root: the boot check (cmdline, kernel release), the knob writes with their
// read-back, the errors naming key and errno, restoration, and the spec's validation.
// Fixture files are regular files (a write does not truncate), so values written over
// each other have the same length, as a kernel file's would not need.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "harness/case/host/restoration_check.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/case/spec/variant.hpp"
#include "tests/common/valid_spec.hpp"

namespace fs = std::filesystem;
using harness::kernel::FaultScope;
using harness::kernel::FsOp;

namespace {

/// VariantApplier::apply's infra_failed reason, nullopt when every knob is applied.
std::optional<std::string> apply_error(harness::case_::VariantApplier& a) {
  const auto applied = a.apply();
  if (applied) return std::nullopt;
  return applied.error().message;
}

class Root {
 public:
  Root() {
    std::string tmpl = (fs::temp_directory_path() / "hk-variant-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
    put("proc/sys/vm/swappiness", "60\n");
    put("sys/kernel/mm/lru_gen/enabled", "0x0000\n");
    put("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    put("proc/cmdline", "console=ttyS0 panic=-1 harness.abtest=1\n");
    put("proc/sys/kernel/osrelease", "6.1.0-57-cloud-amd64\n");
  }
  ~Root() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::trunc) << text;
  }
  std::string get(const std::string& rel) const {
    std::ifstream in(dir_ / rel);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  harness::kernel::Fs fs() const { return harness::kernel::Fs(dir_); }

 private:
  fs::path dir_;
};

harness::case_::VariantSpec candidate() {
  harness::case_::VariantSpec v;
  v.name = "candidate";
  v.pair_id = "vm0/fast-random/1/bounded-reclaim";
  v.sysctls = {{"vm.swappiness", "20"}};
  v.sysfs = {{"/sys/kernel/mm/lru_gen/enabled", "0x0007"}};
  v.cmdline = {"harness.abtest=1"};
  v.kernel_release = "6.1.0-57-cloud-amd64";
  return v;
}

}  // namespace

TEST(VariantRules, NamesPathsValuesAndParams) {
  EXPECT_TRUE(harness::case_::valid_sysctl_name("vm.swappiness"));
  EXPECT_TRUE(harness::case_::valid_sysctl_name("vm.dirty_ratio"));
  EXPECT_FALSE(harness::case_::valid_sysctl_name("swappiness"));      // no dot
  EXPECT_FALSE(harness::case_::valid_sysctl_name("VM.swappiness"));   // upper case
  EXPECT_FALSE(harness::case_::valid_sysctl_name("vm..swappiness"));  // empty component
  EXPECT_FALSE(harness::case_::valid_sysctl_name("vm/swappiness"));
  EXPECT_EQ(harness::case_::sysctl_path("vm.swappiness"), "proc/sys/vm/swappiness");
  EXPECT_EQ(harness::case_::sysctl_path("kernel.numa_balancing"), "proc/sys/kernel/numa_balancing");
  EXPECT_TRUE(harness::case_::check_sysfs_path("/sys/kernel/mm/lru_gen/enabled"));
  EXPECT_FALSE(harness::case_::check_sysfs_path("/sys/kernel/mm/../../../etc/passwd"));
  EXPECT_FALSE(harness::case_::check_sysfs_path("/sys/block/zram0/disksize"));
  EXPECT_FALSE(harness::case_::check_sysfs_path("sys/kernel/mm/lru_gen/enabled"));
  EXPECT_FALSE(harness::case_::check_sysfs_path("/sys/kernel/mm/lru gen"));
  EXPECT_FALSE(harness::case_::check_sysfs_path("/sys/kernel/mm/"));
  EXPECT_TRUE(harness::case_::valid_variant_value("200"));
  EXPECT_TRUE(harness::case_::valid_variant_value("always madvise"));
  EXPECT_FALSE(harness::case_::valid_variant_value(""));
  EXPECT_FALSE(harness::case_::valid_variant_value("1;reboot"));
  EXPECT_FALSE(harness::case_::valid_variant_value(std::string(65, '1')));
  EXPECT_TRUE(harness::case_::valid_cmdline_param("transparent_hugepage=never"));
  EXPECT_FALSE(harness::case_::valid_cmdline_param("a b"));
  EXPECT_FALSE(harness::case_::valid_cmdline_param("init=/bin/sh"));  // '/' not allowed
}

TEST(VariantRules, ReadbackMatchingAndRestoreValue) {
  EXPECT_TRUE(harness::case_::readback_matches("200", "200\n"));
  EXPECT_TRUE(harness::case_::readback_matches("never", "always madvise [never]"));
  EXPECT_TRUE(harness::case_::readback_matches("16", "0x10"));
  EXPECT_FALSE(harness::case_::readback_matches("y", "0x0007"));  // recorded as is, not judged equal
  EXPECT_FALSE(harness::case_::readback_matches("200", "60"));
  EXPECT_EQ(harness::case_::restore_value("always [madvise] never"), "madvise");
  EXPECT_EQ(harness::case_::restore_value(" 60\n"), "60");
}

TEST(VariantApply, WritesReadsBackRecordsAndRestores) {
  Root r;
  harness::case_::VariantApplier a(r.fs(), candidate());
  ASSERT_EQ(apply_error(a), std::nullopt);
  EXPECT_EQ(r.get("proc/sys/vm/swappiness"), "20\n");
  EXPECT_EQ(r.get("sys/kernel/mm/lru_gen/enabled"), "0x0007\n");
  auto j = a.to_json();
  EXPECT_EQ(j["name"], "candidate");
  EXPECT_EQ(j["pair_id"], "vm0/fast-random/1/bounded-reclaim");
  EXPECT_EQ(j["boot"]["cmdline"]["harness.abtest=1"], true);
  EXPECT_EQ(j["boot"]["kernel_release"]["actual"], "6.1.0-57-cloud-amd64");
  const auto& sw = j["settings"]["vm.swappiness"];
  EXPECT_EQ(sw["path"], "/proc/sys/vm/swappiness");
  EXPECT_EQ(sw["before"], "60");
  EXPECT_EQ(sw["written"], "20");
  EXPECT_EQ(sw["readback"], "20");
  EXPECT_EQ(sw["matches"], true);
  EXPECT_EQ(j["settings"]["/sys/kernel/mm/lru_gen/enabled"]["before"], "0x0000");
  EXPECT_TRUE(j["restored"].is_null());
  EXPECT_TRUE(a.needs_restore());

  EXPECT_TRUE(a.restore().empty());
  EXPECT_EQ(r.get("proc/sys/vm/swappiness"), "60\n");
  EXPECT_EQ(r.get("sys/kernel/mm/lru_gen/enabled"), "0x0000\n");
  j = a.to_json();
  EXPECT_EQ(j["restored"], true);
  EXPECT_EQ(j["settings"]["vm.swappiness"]["restore"]["readback"], "60");
  EXPECT_EQ(j["settings"]["vm.swappiness"]["restore"]["ok"], true);
  EXPECT_FALSE(a.needs_restore());
}

TEST(VariantApply, WrongGuestIsRefusedBeforeAnyWrite) {
  {
    Root r;
    auto v = candidate();
    v.cmdline = {"transparent_hugepage=never"};
    harness::case_::VariantApplier a(r.fs(), v);
    const auto err = apply_error(a);
    ASSERT_TRUE(err);
    EXPECT_NE(err->find("booted without transparent_hugepage=never"), std::string::npos) << *err;
    EXPECT_NE(err->find("wrong guest"), std::string::npos) << *err;
    EXPECT_EQ(r.get("proc/sys/vm/swappiness"), "60\n");
    EXPECT_EQ(a.to_json()["boot"]["cmdline"]["transparent_hugepage=never"], false);
    EXPECT_FALSE(a.needs_restore());
  }
  {
    Root r;
    auto v = candidate();
    v.kernel_release = "6.12.0-next";
    harness::case_::VariantApplier a(r.fs(), v);
    const auto err = apply_error(a);
    ASSERT_TRUE(err);
    EXPECT_NE(err->find("runs kernel 6.1.0-57-cloud-amd64 but the variant's image has 6.12.0-next"),
              std::string::npos)
        << *err;
    EXPECT_EQ(r.get("proc/sys/vm/swappiness"), "60\n");
  }
}

TEST(VariantApply, WriteFailureNamesKeyAndErrnoAndEarlierKnobsAreRestored) {
  Root r;
  FaultScope f;
  f.fail("sys/kernel/mm/lru_gen/enabled", EINVAL, FsOp::Write);
  harness::case_::VariantApplier a(r.fs(), candidate());
  const auto err = apply_error(a);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("/sys/kernel/mm/lru_gen/enabled"), std::string::npos) << *err;
  EXPECT_NE(err->find("EINVAL, errno 22"), std::string::npos) << *err;
  EXPECT_EQ(r.get("proc/sys/vm/swappiness"), "20\n");  // the sysctl before it was applied
  harness::kernel::Fs::clear_faults();
  EXPECT_TRUE(a.restore().empty());
  EXPECT_EQ(r.get("proc/sys/vm/swappiness"), "60\n");
  const auto rec = a.to_json()["settings"]["/sys/kernel/mm/lru_gen/enabled"];
  EXPECT_NE(rec["error"].get<std::string>().find("writing '0x0007' failed"), std::string::npos) << rec.dump();
  EXPECT_EQ(r.get("sys/kernel/mm/lru_gen/enabled"), "0x0000\n");  // never written
}

TEST(VariantApply, MissingKnobAndIneffectiveWriteAreInfraFailures) {
  {
    Root r;
    auto v = candidate();
    v.sysctls = {{"vm.no_such_knob", "1"}};
    harness::case_::VariantApplier a(r.fs(), v);
    const auto err = apply_error(a);
    ASSERT_TRUE(err);
    EXPECT_NE(err->find("vm.no_such_knob (/proc/sys/vm/no_such_knob): cannot read it"), std::string::npos) << *err;
    EXPECT_NE(err->find("ENOENT"), std::string::npos) << *err;
  }
  {
    Root r;
    FaultScope f;
    f.fail("proc/sys/vm/swappiness", 0, FsOp::Write);  // "succeeds" without writing
    harness::case_::VariantApplier a(r.fs(), candidate());
    const auto err = apply_error(a);
    ASSERT_TRUE(err);
    EXPECT_NE(err->find("writing '20' had no effect: it still reads '60'"), std::string::npos) << *err;
  }
}

TEST(VariantApply, FailedRestorationIsAProblemOfTheVerdict) {
  Root r;
  harness::case_::VariantApplier a(r.fs(), candidate());
  ASSERT_EQ(apply_error(a), std::nullopt);
  FaultScope f;
  f.fail("proc/sys/vm/swappiness", EBUSY, FsOp::Write);
  const auto problems = a.restore();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("vm.swappiness not restored to '60'"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("EBUSY"), std::string::npos) << problems[0];
  EXPECT_EQ(r.get("sys/kernel/mm/lru_gen/enabled"), "0x0000\n");  // the other knob still restored
  EXPECT_EQ(a.to_json()["restored"], false);
  harness::case_::RestorationObservation obs;
  obs.variant_problems = problems;
  const auto v = harness::case_::verify_restoration(obs);
  EXPECT_FALSE(v.clean);
  EXPECT_EQ(v.problems, problems);
  EXPECT_EQ(a.restore(), problems);  // idempotent: no second write
}

TEST(VariantApply, ChoiceFileIsRestoredToItsSelectedWord) {
  Root r;
  harness::case_::VariantSpec v;
  v.name = "candidate";
  v.pair_id = "p";
  v.sysfs = {{"/sys/kernel/mm/transparent_hugepage/enabled", "never"}};
  harness::case_::VariantApplier a(r.fs(), v);
  ASSERT_EQ(apply_error(a), std::nullopt);
  EXPECT_EQ(a.to_json()["settings"]["/sys/kernel/mm/transparent_hugepage/enabled"]["before"],
            "always [madvise] never");
  // Stand in for the kernel's file with one as long as the word restore must write: the
  // selected word "madvise", not the whole "always [madvise] never" line (EINVAL on a kernel).
  r.put("sys/kernel/mm/transparent_hugepage/enabled", "never__\n");
  EXPECT_TRUE(a.restore().empty());
  EXPECT_EQ(r.get("sys/kernel/mm/transparent_hugepage/enabled"), "madvise\n");
}

TEST(VariantSpec, ParsedFromTheSpecAndValidatedWithTheField) {
  auto j = test_support::valid_spec("ab-1");
  j["variant"] = {{"name", "candidate"},
                  {"pair_id", "vm0/fast-structured/1/bounded-reclaim"},
                  {"sysctls", {{"vm.swappiness", "200"}}},
                  {"sysfs", {{"/sys/kernel/mm/lru_gen/enabled", "y"}}},
                  {"cmdline", {"harness.abtest=1"}},
                  {"kernel_release", nullptr},
                  {"kernel_image_dir", nullptr}};
  const auto s = harness::case_::parse_spec(j.dump(), "spec.json");
  ASSERT_TRUE(s.variant);
  EXPECT_EQ(s.variant->name, "candidate");
  EXPECT_EQ(s.variant->sysctls, (std::vector<std::pair<std::string, std::string>>{{"vm.swappiness", "200"}}));
  EXPECT_EQ(s.variant->cmdline, std::vector<std::string>{"harness.abtest=1"});
  EXPECT_FALSE(s.variant->kernel_release);
  EXPECT_FALSE(harness::case_::parse_spec(test_support::valid_spec("plain").dump(), "spec.json").variant);

  auto field_of = [](nlohmann::json doc) {
    try {
      harness::case_::parse_spec(doc.dump(), "spec.json");
    } catch (const harness::case_::SpecError& e) {
      return e.field();
    }
    return std::string("(accepted)");
  };
  auto bad = j;
  bad["variant"]["sysctls"] = {{"vm/../../x", "1"}};
  EXPECT_EQ(field_of(bad), "variant.sysctls.vm/../../x");
  bad = j;
  bad["variant"]["sysfs"] = {{"/etc/passwd", "1"}};
  EXPECT_EQ(field_of(bad), "variant.sysfs./etc/passwd");
  bad = j;
  bad["variant"]["sysctls"] = {{"vm.swappiness", "1; reboot"}};
  EXPECT_EQ(field_of(bad), "variant.sysctls.vm.swappiness");
  bad = j;
  bad["variant"]["cmdline"] = {"ok=1", "init=/bin/sh"};
  EXPECT_EQ(field_of(bad), "variant.cmdline[1]");
  bad = j;
  bad["variant"]["extra"] = 1;
  EXPECT_EQ(field_of(bad), "variant.extra");
}
