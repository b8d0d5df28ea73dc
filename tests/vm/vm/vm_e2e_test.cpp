// vm-labelled end-to-end test: `harness vm image` -> `harness vm up`
// -> GET /v1/qualification passes inside the guest -> POST one short case -> poll ->
// download the bundle -> open it with results::Db and check its rows -> `harness vm down`.
// Uses its own cache dir under the build tree (kernel download cached there).
// Slow under TCG (minutes); the case phases are shortened (5/10/5 s). The expected kernel is
// the image's (its manifest), the expected accelerator this machine's (choose_accelerator, as
// `vm up` decides it): neither is a literal.
#include "harness/vm/accel.hpp"
#include "harness/vm/image.hpp"
#include "harness/vm/paths.hpp"
#include "results/db.hpp"
#include "tests/common/agent_support.hpp"
#include "tests/common/guest_exec.hpp"
#include "tests/common/vm_downloads.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::slurp;

namespace {

std::string harness_bin() { return std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness"; }
std::string cache_dir() { return std::string(HARNESS_BINARY_DIR) + "/vm-e2e-cache"; }

// Runs a shell command line, returns exit status; output is echoed to the test log.
int sh(const std::string& cmd) {
  std::fprintf(stderr, "+ %s\n", cmd.c_str());
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The SPEC.md example, shortened to 5/10/5 s phases (20 s in all) and a 450 MiB allocation.
json short_case(const std::string& id) { return test_support::valid_spec(id, "vm-e2e", 5, 10, 5, 471859200); }

class VmEndToEnd : public ::testing::Test {
 protected:
  void TearDown() override { sh(harness_bin() + " vm --cache " + cache_dir() + " down"); }
};

TEST_F(VmEndToEnd, ImageBootQualifyCaseBundle) {
  fs::create_directories(cache_dir());
  test_support::share_vm_downloads(cache_dir());
  ASSERT_EQ(sh(harness_bin() + " vm --cache " + cache_dir() + " image"), 0);
  json manifest = json::parse(slurp(fs::path(cache_dir()) / "image/manifest.json"));
  ASSERT_EQ(manifest["missing_binaries"].size(), 0u) << manifest.dump(2);
  EXPECT_EQ(manifest["sha256"].get<std::string>().size(), 64u);
  ASSERT_EQ(manifest["inputs_sha256"].get<std::string>().size(), 64u) << manifest.dump(2);
  // The same inputs again: the image is kept, byte for byte; --rebuild builds it anew with the
  // same inputs recorded.
  const std::string again = cache_dir() + "/image-again.log";
  ASSERT_EQ(sh(harness_bin() + " vm --cache " + cache_dir() + " image > " + again + " 2>&1"), 0) << slurp(again);
  EXPECT_NE(slurp(again).find("vm image: up to date: "), std::string::npos) << slurp(again);
  EXPECT_NE(slurp(again).find("kept (same inputs), checked in"), std::string::npos) << slurp(again);
  EXPECT_EQ(slurp(fs::path(cache_dir()) / "image/manifest.json"), manifest.dump(2) + "\n");
  ASSERT_EQ(sh(harness_bin() + " vm --cache " + cache_dir() + " image --rebuild > " + again + " 2>&1"), 0)
      << slurp(again);
  EXPECT_EQ(slurp(again).find("up to date"), std::string::npos) << slurp(again);
  EXPECT_NE(slurp(again).find("build time: "), std::string::npos) << slurp(again);
  const json rebuilt = json::parse(slurp(fs::path(cache_dir()) / "image/manifest.json"));
  EXPECT_EQ(rebuilt["inputs_sha256"], manifest["inputs_sha256"]);
  // The kernel the guest boots: the rebuilt image's, as its manifest and `vm image` report it.
  const std::string image_kernel = rebuilt.value("kernel_release", "");
  ASSERT_FALSE(image_kernel.empty()) << rebuilt.dump(2);
  EXPECT_NE(slurp(again).find("kernel: " + image_kernel + " ("), std::string::npos) << slurp(again);

  // The accelerator `vm up` will boot the guest under: the product's decision on this machine
  // (no --accel: $HARNESS_ACCEL, else auto), from the same cache, so the same probe result.
  harness::vm::AccelRequest probe;
  probe.vmlinuz = harness::vm::load_image(cache_dir()).vmlinuz;
  probe.cache_dir = harness::vm::cache_root(cache_dir());
  const harness::vm::AccelChoice machine = harness::vm::choose_accelerator(probe);
  std::fprintf(stderr, "this machine: %s\n", machine.message().c_str());

  std::string hosts = cache_dir() + "/hosts-e2e.yaml";
  ASSERT_EQ(sh(harness_bin() + " vm --cache " + cache_dir() + " up --count 1 --hosts-file " + hosts), 0);
  YAML::Node h = YAML::LoadFile(hosts);
  ASSERT_EQ(h["hosts"].size(), 1u);
  std::string url = h["hosts"][0]["url"].as<std::string>();
  std::string token = slurp(h["hosts"][0]["token_file"].as<std::string>());
  while (!token.empty() && token.back() == '\n') token.pop_back();
  std::smatch m;
  ASSERT_TRUE(std::regex_match(url, m, std::regex(R"(http://127\.0\.0\.1:(\d+))"))) << url;
  auto c = test_support::agent_client(std::stoi(m[1]), token, 300);

  auto q = c.Get("/v1/qualification");
  ASSERT_TRUE(q);
  ASSERT_EQ(q->status, 200) << q->body;
  json report = json::parse(q->body);
  EXPECT_EQ(report["passed"], true) << report.dump(2);

  std::string id = "vm-e2e-case-1";
  auto p = c.Post("/v1/cases", short_case(id).dump(), "application/json");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->status, 202) << p->body;

  json st = test_support::wait_final(c, id, std::chrono::minutes(30), std::chrono::seconds(2));
  ASSERT_EQ(st["state"], "completed") << st.dump() << "\n(see harness vm --cache " << cache_dir()
                                      << " console vm0)";

  auto b = c.Get(("/v1/cases/" + id + "/bundle").c_str());
  ASSERT_TRUE(b);
  ASSERT_EQ(b->status, 200);
  fs::path bundle = fs::path(cache_dir()) / (id + ".db");
  { std::ofstream(bundle, std::ios::binary) << b->body; }
  results::Db db(bundle.string(), results::Db::Mode::ReadOnly);
  results::Stmt cs(db, "SELECT status, accelerator, kernel_release FROM cases WHERE case_id = ?");
  cs.bind(1, id);
  ASSERT_TRUE(cs.step());
  EXPECT_EQ(cs.text(0), "completed");
  EXPECT_EQ(cs.opt_text(1).value_or(""), machine.accelerator) << machine.reason;  // harness.accelerator= of the boot
  EXPECT_EQ(cs.opt_text(2).value_or(""), image_kernel);  // uname -r in the guest: the image's kernel
  results::Stmt n(db, "SELECT canary, COUNT(*) FROM canary_requests WHERE case_id = ? GROUP BY canary");
  n.bind(1, id);
  int canaries = 0;
  while (n.step()) {
    ++canaries;
    // 20 s of 100 ms periods = 200 scheduled requests per canary, every one run and traced
    // (none skipped); > 150 keeps the former bound's share (> 300 of 400: more than 3/4).
    EXPECT_GT(n.int64(1), 150) << n.text(0);
  }
  EXPECT_EQ(canaries, 2);
  results::Stmt t(db, "SELECT COUNT(*) FROM telemetry WHERE case_id = ?");
  t.bind(1, id);
  ASSERT_TRUE(t.step());
  // 1 Hz ticks at T0 + 25 ms over 20 s = 20 samples; > 10 keeps the former bound's share
  // (> 20 of 40: more than half; a late tick is skipped, never caught up).
  EXPECT_GT(t.int64(0), 10);
}

}  // namespace
