#pragma once
// The steps the campaign vm tests (tests/vm/campaign) share: `harness` run with a private
// XDG cache, every command's output appended to one log, and `harness vm down` after the
// campaign whatever it gave, so that the test asserts the run's exit code with the log.
// Header-only; needs HARNESS_BINARY_DIR; include as "tests/common/campaign_vm.hpp".
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/common/run_harness.hpp"
#include "tests/common/vm_downloads.hpp"

namespace test_support {

/// One campaign vm test's private world. `dir` is a fresh /tmp/campaign-<name>-XXXXXX (the
/// test removes it when it passed, so a failure leaves the log); `log` is `dir`/run.log;
/// `xdg` is <build>/campaign-<name>-xdg, the XDG_CACHE_HOME of every command: its image is
/// built from this build's binaries (never a stale image from ~/.cache) and its guests are
/// this test's alone (the fleet lives in `xdg`/reclaim-harness). The kernel package, the canary
/// DB and the default image are the build's one copy (share_vm_downloads); `xdg` (the fleet and
/// the links) is removed when the test passed.
struct CampaignVm {
  std::string dir, log, xdg;

  explicit CampaignVm(const std::string& name)
      : dir(make_dir(name)), log(dir + "/run.log"), xdg(std::string(HARNESS_BINARY_DIR) + "/campaign-" + name + "-xdg") {
    share_vm_downloads(xdg + "/reclaim-harness");
  }
  ~CampaignVm() {
    if (!::testing::Test::HasFailure() && !::testing::UnitTest::GetInstance()->Failed()) {
      std::error_code ec;
      std::filesystem::remove_all(xdg, ec);
    }
  }
  CampaignVm(const CampaignVm&) = delete;
  CampaignVm& operator=(const CampaignVm&) = delete;

  /// "XDG_CACHE_HOME=<xdg> ", the shell prefix of every command.
  std::string env() const { return "XDG_CACHE_HOME=" + xdg + " "; }

  /// `harness <args>` (shell-quoted) with env(), output appended to `log`; the log so far.
  HarnessRun harness(const std::string& args) const { return run_harness(args, log, LogMode::Append, env()); }

  /// Starts `harness <args...>` in the background (fork and exec, no shell) with env()'s
  /// XDG_CACHE_HOME and its output appended to `log`, so that the test can act on the guest
  /// while it runs and wait for (or kill) the returned pid.
  pid_t spawn_harness(const std::vector<std::string>& args) const {
    const pid_t pid = fork();
    if (pid == 0) {
      std::freopen(log.c_str(), "a", stdout);
      std::freopen(log.c_str(), "a", stderr);
      setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
      const std::string bin = harness_binary();
      std::vector<char*> argv{const_cast<char*>(bin.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    return pid;
  }

  /// `harness <run_args>`, its wall time printed (s), then `harness <down_args>` whatever it
  /// gave (the guests never outlive the test); the exit code of the run, the log after both.
  HarnessRun run_then_down(const std::string& run_args, const std::string& down_args = "vm down") const {
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = harness(run_args).code;
    std::printf("harness %s: %.0f s wall\n", run_args.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return {rc, harness(down_args).out};
  }

 private:
  static std::string make_dir(const std::string& name) {
    std::string tmpl = "/tmp/campaign-" + name + "-XXXXXX";
    const char* d = mkdtemp(tmpl.data());
    if (d == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    return d;
  }
};

}  // namespace test_support
