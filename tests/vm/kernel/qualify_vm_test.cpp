// Qualification in a real local guest (label vm; ~30 s boot under TCG). Boots one
// 1-vCPU/1-GiB guest with hk_vm's fleet (the agent runs there) and reads
// GET /v1/qualification, which the agent answers with qualify::run() in the guest: every
// required check must pass on a fresh guest, including the real memory.reclaim probe
// (EAGAIN on the empty scratch cgroup = writable). Needs the image built from this build:
// `harness vm [--cache DIR] image --bin-dir <build>/harness/cli`; set HARNESS_CACHE=DIR
// when not using the default cache.
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
  if (const char* c = std::getenv("HARNESS_CACHE")) o.cache_dir = c;
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
