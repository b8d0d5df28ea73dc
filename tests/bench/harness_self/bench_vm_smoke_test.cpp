// Smoke run of one guest bench of this folder (label vm): BENCH_SCRIPT (run_bench.sh or
// perturbation_bench.sh) with short phases in a fresh local guest, to check that it still runs
// end to end (the case(s) completed, the figures printed), never its numbers. The image is
// built in the vm tests' cache first (tests/common/guest_exec.hpp); with BENCH_WITH_CLI the
// image that carries the whole CLI (`vm image --with-cli`, the shared "image-with-cli"), for
// run_bench.sh, whose second executor is the full `harness`.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "tests/common/guest_exec.hpp"

TEST(BenchSmoke, RunsInAGuestAndPrintsItsFigures) {
  namespace fs = std::filesystem;
  const std::string build = HARNESS_BINARY_DIR, harness = build + "/harness/cli/harness";
#ifdef BENCH_WITH_CLI
  const bool with_cli = true;
#else
  const bool with_cli = false;
#endif
  const char* cache_env = std::getenv("HARNESS_VM_CASE_CACHE");
  const std::string cache = cache_env ? cache_env : build + (with_cli ? "/case-vm-cache-cli" : "/case-vm-cache");
  if (!cache_env) test_support::share_vm_downloads(cache, with_cli ? "image-with-cli" : "image");
  const fs::path out = fs::temp_directory_path() / ("bench_smoke_" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  ASSERT_EQ(test_support::sh(harness + " vm --cache " + cache + " image" + (with_cli ? " --with-cli" : "") + " > " +
                              out.string() + "/image.log 2>&1"),
            0)
      << test_support::slurp(out / "image.log");
  const std::string cmd = "HARNESS_VM_CACHE=" + cache + " " BENCH_ENV " sh " HARNESS_SOURCE_DIR
                          "/tests/bench/harness_self/" BENCH_SCRIPT " " + build + " " + (out / "bench").string() +
                          " > " + (out / "bench.log").string() + " 2>&1";
  const int rc = test_support::sh(cmd);
  const std::string log = test_support::slurp(out / "bench.log");
  std::cout << log;
  EXPECT_EQ(rc, 0) << cmd << "\n" << log << test_support::slurp(out / "bench/exec.log");
  EXPECT_NE(log.find(BENCH_EXPECT), std::string::npos) << log;
  if (rc == 0 && !::testing::Test::HasFailure()) fs::remove_all(out);
}
