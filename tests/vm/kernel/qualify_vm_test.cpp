// Qualification in a real local guest (label vm; ~30 s boot under TCG). Boots one
// 1-vCPU/1-GiB guest with hk_vm's fleet (the agent runs there) and reads
// GET /v1/qualification, which the agent answers with qualify::run() in the guest: every
// required check must pass on a fresh guest, including the real memory.reclaim probe
// (EAGAIN on the empty scratch cgroup = writable). Needs the image built from this build:
// the test builds it into <build>/qualify-vm-cache (set HARNESS_CACHE=DIR to use an existing
// cache whose image was built by `harness vm --cache DIR image` instead). A second guest boots
// with psi=0 (`harness vm exec --cmdline psi=0`): its qualification must tell PSI switched off
// at boot from PSI compiled out, and name psi=1.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "harness/vm/exec.hpp"
#include "harness/vm/fleet.hpp"
#include "tests/common/vm_downloads.hpp"

namespace {
size_t collect(char* p, size_t s, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, s * n);
  return s * n;
}

/// GET url with a bearer token; returns the body, sets *status.
std::string http_get(const std::string& url, const std::string& token, long* status) {
  std::string body;
  CURL* c = curl_easy_init();
  curl_slist* h = curl_slist_append(nullptr, ("Authorization: Bearer " + token).c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
  CURLcode rc = curl_easy_perform(c);
  *status = 0;
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return body;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

/// The cache with an image built from this build, built once per test process (HARNESS_CACHE
/// overrides it). Empty on a failed build (the log is named by the assertion).
std::string image_cache() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    if (const char* c = std::getenv("HARNESS_CACHE")) {
      dir = c;
      return;
    }
    const std::string d = std::string(HARNESS_BINARY_DIR) + "/qualify-vm-cache";
    const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
    test_support::share_vm_downloads(d);
    if (std::system((harness + " vm --cache " + d + " image > " + d + ".image.log 2>&1").c_str()) == 0) dir = d;
  });
  return dir;
}
}  // namespace

TEST(QualifyVm, FreshGuestQualifies) {
  harness::vm::FleetOptions o;
  // A private cache with an image built from this build (a new machine has no image in
  // ~/.cache, and a shared one may be stale); HARNESS_CACHE overrides it.
  o.cache_dir = image_cache();
  ASSERT_FALSE(o.cache_dir.empty()) << "guest image build failed: see " << HARNESS_BINARY_DIR
                                    << "/qualify-vm-cache.image.log";
  o.count = 1;
  o.first_index = 90;  // vm90: away from guests other tests or people start
  o.swapfile_mib = 64;
  auto guests = harness::vm::fleet_up(o);
  ASSERT_EQ(guests.size(), 1u);
  long status = 0;
  const std::string body = http_get(guests[0].url + "/v1/qualification", first_line(guests[0].token_file), &status);
  harness::vm::fleet_down(o.cache_dir, {guests[0].name});
  ASSERT_EQ(status, 200) << body;

  const auto j = nlohmann::json::parse(body);
  EXPECT_EQ(j["passed"], true) << j["reasons"].dump(2);
  ASSERT_TRUE(j["checks"].is_array());
  ASSERT_FALSE(j["checks"].empty()) << "no checks: 'passed' would be vacuous";
  bool saw_reclaim = false;
  for (const auto& c : j["checks"]) {
    EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
    if (c["name"] == "memory_reclaim") {
      saw_reclaim = true;
      EXPECT_NE(c["found"].get<std::string>().find("memory.reclaim"), std::string::npos) << c.dump();
    }
  }
  EXPECT_TRUE(saw_reclaim) << "no memory_reclaim check in " << j["checks"].dump();
  EXPECT_EQ(j["recorded"]["kernel_release"].get<std::string>().rfind("6.1.", 0), 0u);
  EXPECT_EQ(j["recorded"]["cgroup2_mount"], "/sys/fs/cgroup");
  EXPECT_EQ(j["recorded"]["swaps"].size(), 0u);  // clean start: nothing swapped on
  // What the fleet preflight compares: the kernel config items and the compressors.
  EXPECT_EQ(j["recorded"]["kernel_config"]["CONFIG_PSI"], "y") << j["recorded"]["kernel_config"].dump();
  EXPECT_TRUE(j["recorded"]["compressors"]["lzo-rle"].is_string()) << j["recorded"]["compressors"].dump();
  EXPECT_NE(j["recorded"]["zswap_enabled"], "Y");  // the zswap check passed above
}

TEST(QualifyVm, GuestBootedWithPsi0IsToldToBootWithPsi1) {
  const std::string cache = image_cache();
  ASSERT_FALSE(cache.empty()) << "guest image build failed: see " << HARNESS_BINARY_DIR << "/qualify-vm-cache.image.log";
  const std::string dir = std::string(HARNESS_BINARY_DIR) + "/qualify-vm-psi0";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream sh(dir + "/script.sh");
    sh << "cat /proc/cmdline > /out/cmdline\n"
          "harness qualify --json --no-reclaim-probe > /out/qualify.json\n"
          "echo $? > /out/rc\n";
  }
  harness::vm::ExecOptions e;
  e.cache_dir = cache;
  e.script = dir + "/script.sh";
  e.collect_dir = dir + "/out";
  e.timeout_s = 400;
  e.swapfile_mib = 16;
  e.extra_cmdline = {"psi=0"};
  const auto r = harness::vm::exec_once(e);
  ASSERT_FALSE(r.timed_out) << r.console_log;
  ASSERT_EQ(r.script_status, 0) << r.console_log;
  EXPECT_NE(first_line(e.collect_dir + "/cmdline").find(" psi=0"), std::string::npos);
  std::ifstream in(e.collect_dir + "/qualify.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["passed"], false);
  nlohmann::json psi;
  for (const auto& c : j["checks"])
    if (c["name"] == "psi") psi = c;
  ASSERT_TRUE(psi.is_object()) << j["checks"].dump();
  EXPECT_FALSE(psi["passed"].get<bool>());
  EXPECT_NE(psi["found"].get<std::string>().find("PSI is disabled at boot (psi=0 on the kernel command line); the "
                                                 "kernel has CONFIG_PSI=y"),
            std::string::npos) << psi.dump();
  EXPECT_EQ(psi["fix"], "boot with psi=1 (remove psi=0 from the kernel command line)");
  EXPECT_EQ(psi["fix"].get<std::string>().find("use a kernel built with"), std::string::npos);
}
