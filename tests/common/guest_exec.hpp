#pragma once
// Shared by the vm-labelled tests that run one shell script in a fresh guest
// (`harness vm image` then `harness vm exec`): tests/vm/case/*_vm_test.cpp and others;
// it brings test_support::slurp (tests/common/slurp.hpp) to the vm tests.
// Header-only; include as "tests/common/guest_exec.hpp". Needs HARNESS_BINARY_DIR.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/common/slurp.hpp"
#include "tests/common/vm_downloads.hpp"

namespace test_support {

inline int sh(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/// One guest run: `dir`/script.sh, `dir`/collect (the guest's /out and console.log),
/// `dir`/{image,exec}.log.
struct GuestRun {
  std::filesystem::path dir;
  bool image_ok = false;
  int exec_rc = -1;
  std::string setup_error;  ///< why the guest never ran the script ("" when it did)
  std::filesystem::path out(const std::string& f) const { return dir / "collect" / f; }
};

/// The rule for a suite that runs one guest in SetUpTestSuite: a failed setup must fail every
/// test of the suite, never skip it (a fatal failure in GoogleTest's SetUpTestSuite skips the
/// suite's tests). SetUpTestSuite only records the run; each test's SetUp() calls this first,
/// as ASSERT_NO_FATAL_FAILURE(test_support::require_guest_ran(run_)).
inline void require_guest_ran(const GuestRun& g) {
  ASSERT_TRUE(g.setup_error.empty()) << g.setup_error;
}

/// Builds (or reuses) the image in the cache ($HARNESS_VM_CASE_CACHE, default
/// <build>/case-vm-cache: a private cache, so that other builds sharing ~/.cache cannot
/// swap the binaries), then runs `script` in a fresh guest. The output dir is $`keep_env`
/// when set, else <tmp>/<name>_<pid>. `with_cli`: the image carries the whole `harness` CLI
/// (`harness vm image --with-cli`, for a script that runs the workstation's commands in the
/// guest), from <build>/case-vm-cache-cli and the shared image "image-with-cli".
inline GuestRun run_in_guest(const std::string& script, const char* keep_env, const std::string& name,
                             int timeout_s, bool with_cli = false) {
  namespace fs = std::filesystem;
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  GuestRun g;
  if (!fs::exists(harness)) {
    g.setup_error = "no harness binary at " + harness + " (build it first)";
    return g;
  }
  const char* keep = std::getenv(keep_env);
  g.dir = keep ? fs::path(keep) : fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(g.dir);
  fs::create_directories(g.dir / "collect");
  std::ofstream(g.dir / "script.sh") << script;
  const char* cache_env = std::getenv("HARNESS_VM_CASE_CACHE");
  const std::string cache = cache_env ? cache_env
                                      : std::string(HARNESS_BINARY_DIR) + (with_cli ? "/case-vm-cache-cli" : "/case-vm-cache");
  if (!cache_env) share_vm_downloads(cache, with_cli ? "image-with-cli" : "image");
  const std::string d = g.dir.string();
  g.image_ok = sh(harness + " vm --cache " + cache + " image" + (with_cli ? " --with-cli" : "") + " > " + d +
                  "/image.log 2>&1") == 0;
  if (!g.image_ok) {
    g.setup_error = "harness vm image failed:\n" + slurp(g.dir / "image.log");
    return g;
  }
  g.exec_rc = sh(harness + " vm --cache " + cache + " exec --script " + d + "/script.sh --collect " + d +
                 "/collect --timeout-s " + std::to_string(timeout_s) + " > " + d + "/exec.log 2>&1");
  return g;
}

}  // namespace test_support
