// The hosts file written by `vm up` parses as HOSTS.md describes.
#include "harness/vm/fleet.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

namespace fs = std::filesystem;

TEST(HostsFile, MatchesHostsMdFormat) {
  fs::path p = fs::temp_directory_path() / ("hosts-" + std::to_string(getpid()) + ".yaml");
  harness::vm::GuestInfo a;
  a.name = "vm0";
  a.url = "http://127.0.0.1:40123";
  a.token_file = "/root/.cache/reclaim-harness/vms/vm0/token";
  a.accelerator = "tcg";
  harness::vm::GuestInfo b = a;
  b.name = "vm1";
  b.url = "http://127.0.0.1:40124";
  harness::vm::write_hosts_file(p.string(), {a, b}, true);
  YAML::Node n = YAML::LoadFile(p.string());
  ASSERT_EQ(n.size(), 1u);  // only `hosts` (the fresh_per_case note is a comment)
  ASSERT_EQ(n["hosts"].size(), 2u);
  EXPECT_EQ(n["hosts"][1]["name"].as<std::string>(), "vm1");
  EXPECT_EQ(n["hosts"][1]["url"].as<std::string>(), "http://127.0.0.1:40124");
  EXPECT_EQ(n["hosts"][0]["token_file"].as<std::string>(), a.token_file);
  EXPECT_EQ(n["hosts"][0]["accelerator"].as<std::string>(), "tcg");
  EXPECT_TRUE(n["hosts"][0]["local"].as<bool>());
  fs::remove(p);
}

// Issue 59: a campaign's guest on a slot of another name is listed under the campaign's VM
// name, with local_guest naming the slot; one on its own name gets no local_guest.
TEST(HostsFile, AGuestServingAnotherNameIsListedUnderItWithItsLocalGuest) {
  fs::path p = fs::temp_directory_path() / ("hosts-serves-" + std::to_string(getpid()) + ".yaml");
  harness::vm::GuestInfo a;
  a.name = "vm1";
  a.serves = "vm0";
  a.url = "http://127.0.0.1:40125";
  a.token_file = "/t1";
  harness::vm::GuestInfo b = a;
  b.name = "vm2";
  b.serves = "vm2";
  harness::vm::write_hosts_file(p.string(), {a, b}, false);
  YAML::Node n = YAML::LoadFile(p.string());
  ASSERT_EQ(n["hosts"].size(), 2u);
  EXPECT_EQ(n["hosts"][0]["name"].as<std::string>(), "vm0");
  EXPECT_EQ(n["hosts"][0]["local_guest"].as<std::string>(), "vm1");
  EXPECT_EQ(n["hosts"][1]["name"].as<std::string>(), "vm2");
  EXPECT_FALSE(n["hosts"][1]["local_guest"]);
  fs::remove(p);
}
