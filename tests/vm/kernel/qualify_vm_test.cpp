// Qualification in a real local guest (label vm; ~30 s boot under TCG). Boots one
// 1-vCPU/1-GiB guest with hk_vm's fleet (the agent runs there) and reads
// GET /v1/qualification, which the agent answers with qualify::run() in the guest: every
// required check must pass on a fresh guest, including the real memory.reclaim probe
// (EAGAIN on the empty scratch cgroup = writable). Needs the image built from this build:
// the test builds it into <build>/qualify-vm-cache (set HARNESS_CACHE=DIR to use an existing
// cache whose image was built by `harness vm --cache DIR image` instead).
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/vm/fleet.hpp"

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
}  // namespace

TEST(QualifyVm, FreshGuestQualifies) {
  hvm::FleetOptions o;
  // A private cache with an image built from this build (a new machine has no image in
  // ~/.cache, and a shared one may be stale); HARNESS_CACHE overrides it.
  if (const char* c = std::getenv("HARNESS_CACHE")) {
    o.cache_dir = c;
  } else {
    o.cache_dir = std::string(HARNESS_BINARY_DIR) + "/qualify-vm-cache";
    const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
    ASSERT_EQ(std::system((harness + " vm --cache " + o.cache_dir + " image > " + o.cache_dir + ".image.log 2>&1").c_str()),
              0)
        << "guest image build failed: see " << o.cache_dir << ".image.log";
  }
  o.count = 1;
  o.first_index = 90;  // vm90: away from guests other tests or people start
  o.swapfile_mib = 64;
  auto guests = hvm::fleet_up(o);
  ASSERT_EQ(guests.size(), 1u);
  long status = 0;
  const std::string body = http_get(guests[0].url + "/v1/qualification", first_line(guests[0].token_file), &status);
  hvm::fleet_down(o.cache_dir, {guests[0].name});
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
}
