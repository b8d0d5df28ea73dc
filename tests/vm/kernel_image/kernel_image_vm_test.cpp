// docs/CI.md "What a job does", end to end on a local qemu guest: the baseline is the default image
// (Debian's current 6.1 cloud kernel), the candidate another Debian 6.1 cloud kernel, unpacked
// from its package (apt-get download, dpkg -x) as a user's own build would be and given to
// `harness vm image --kernel --modules --out images/candidate`; tests/vm/kernel_image/ab-kernel.yaml
// points variants.candidate at that image. `harness check` runs the pair: each case booted
// its variant's kernel (cases.kernel_release), the two differ, the environment table and the
// JUnit environment testcase say so, and nothing warns of an A/A run. Before that, the same
// --kernel without --out is refused and leaves the default image alone.
#include "results/db.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "tests/common/campaign_vm.hpp"
#include "tests/common/slurp.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::string shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

/// The Debian package linux-image-cloud-amd64 depends on now (the default image's kernel).
std::string default_package() {
  std::smatch m;
  const std::string out = shell("apt-cache depends linux-image-cloud-amd64");
  return std::regex_search(out, m, std::regex(R"(Depends: (linux-image-6\.1\.0-[0-9]+-cloud-amd64))")) ? m[1].str()
                                                                                                     : "";
}

/// Another 6.1 cloud kernel package the archive lists (the highest ABI below the default's).
std::string other_package(const std::string& def) {
  const std::string out = shell("apt-cache search --names-only '^linux-image-6.1.0-[0-9]+-cloud-amd64$'");
  std::set<int> abis;
  const std::regex re(R"(linux-image-6\.1\.0-([0-9]+)-cloud-amd64)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it)
    abis.insert(std::stoi((*it)[1].str()));
  std::smatch m;
  if (!std::regex_search(def, m, re)) return "";
  const int d = std::stoi(m[1].str());
  for (auto a = abis.rbegin(); a != abis.rend(); ++a)
    if (*a < d) return "linux-image-6.1.0-" + std::to_string(*a) + "-cloud-amd64";
  return "";
}

}  // namespace

TEST(KernelImageVm, CandidateKernelInItsOwnImageBootsAndIsRecorded) {
  const test_support::CampaignVm vm("abkernel");
  const std::string def = default_package(), other = other_package(def);
  ASSERT_FALSE(def.empty()) << "apt-cache depends linux-image-cloud-amd64 names no kernel";
  ASSERT_FALSE(other.empty()) << "apt-cache lists no other 6.1 cloud kernel than " << def;
  const std::string release = other.substr(std::string("linux-image-").size());
  const std::string def_release = def.substr(std::string("linux-image-").size());

  // The candidate kernel as a user has it: a bzImage, its modules tree and its config.
  const fs::path k = fs::path(vm.dir) / "kernel";
  fs::create_directories(k);
  ASSERT_EQ(std::system(("cd " + k.string() + " && apt-get download " + other + " >> " + vm.log + " 2>&1 && dpkg -x " +
                         other + "_*.deb root >> " + vm.log + " 2>&1")
                            .c_str()),
            0)
      << test_support::slurp(vm.log);
  const std::string bz = (k / "root/boot" / ("vmlinuz-" + release)).string();
  const std::string mods = (k / "root/lib/modules" / release).string();

  const auto base = vm.harness("vm image");
  ASSERT_EQ(base.code, 0) << base.out;
  ASSERT_THAT(base.out, HasSubstr("kernel: " + def_release));
  // Without --out the candidate would replace the default image: refused, default kept.
  const auto refused = vm.harness("vm image --kernel " + bz + " --modules " + mods);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("--kernel without --out would rebuild the default image"));
  const auto manifest = test_support::slurp(vm.xdg + "/reclaim-harness/image/manifest.json");
  EXPECT_THAT(manifest, HasSubstr("\"kernel_release\": \"" + def_release + "\""));

  const std::string campaign = vm.dir + "/ab-kernel.yaml";
  fs::copy_file(std::string(HARNESS_SOURCE_DIR) + "/tests/vm/kernel_image/ab-kernel.yaml", campaign);
  const auto cand = vm.harness("vm image --kernel " + bz + " --modules " + mods + " --out " + vm.dir +
                               "/images/candidate");
  ASSERT_EQ(cand.code, 0) << cand.out;
  EXPECT_THAT(cand.out, HasSubstr("kernel " + release + ": configuration " + k.string() + "/root/boot/config-" +
                                  release + " has what the harness needs"));
  EXPECT_THAT(cand.out, HasSubstr("this is not the default image"));

  const std::string db = vm.dir + "/ab.db";
  const auto check = vm.run_then_down("check " + campaign + " " + db + " --junit " + vm.dir + "/junit.xml --markdown " +
                                      vm.dir + "/summary.md --plain");
  ASSERT_EQ(check.code, 0) << check.out;
  EXPECT_THAT(check.out, Not(HasSubstr("this comparison is A/A")));

  results::Db d(db, results::Db::Mode::ReadOnly);
  results::Stmt q(d, "SELECT json_extract(spec_json, '$.variant.name'), status, kernel_release FROM cases ORDER BY 1");
  std::map<std::string, std::string> booted;
  while (q.step()) {
    EXPECT_EQ(q.text(1), "completed") << q.text(0);
    booted[q.text(0)] = q.opt_text(2).value_or("");
  }
  ASSERT_EQ(booted.size(), 2u);
  EXPECT_EQ(booted["baseline"], def_release);
  EXPECT_EQ(booted["candidate"], release);
  EXPECT_NE(booted["baseline"], booted["candidate"]);

  const std::string junit = test_support::slurp(vm.dir + "/junit.xml");
  EXPECT_THAT(junit, HasSubstr("classname=\"ab-kernel.environment\""));
  EXPECT_THAT(junit, HasSubstr("name=\"baseline.kernel_release\" value=\"" + def_release + "\""));
  EXPECT_THAT(junit, HasSubstr("name=\"candidate.kernel_release\" value=\"" + release + "\""));
  const std::string md = test_support::slurp(vm.dir + "/summary.md");
  EXPECT_THAT(md, HasSubstr("| kernel release | " + def_release + " | " + release +
                            " | differs, asked for: variants.*.kernel.image_dir differ |"));
  fs::remove_all(vm.dir);
}
