#pragma once
// The reboot between cases (harness/agent/API.md "Reboot"): POST /v1/reboot with
// --allow-reboot answers 202, holds the busy slot (no case starts in between) and reboots
// 500 ms later, after the answer is out.
#include "harness/agent/cases/registry.hpp"

#include <httplib.h>

#include <string>
#include <thread>

namespace harness::agent {

/// /proc/sys/kernel/random/boot_id without the newline; "" when unreadable.
std::string boot_id();

class Rebooter {
 public:
  /// `allowed`: --allow-reboot. `reboot_cmd`: the test override run with sh -c instead of
  /// the reboot ("" = `systemctl reboot` under systemd, else sync() + reboot(RB_AUTOBOOT)).
  Rebooter(Registry& reg, bool allowed, std::string reboot_cmd);
  /// Waits for a pending reboot thread (a test command's, or a failed reboot's).
  ~Rebooter();
  Rebooter(const Rebooter&) = delete;
  Rebooter& operator=(const Rebooter&) = delete;

  /// POST /v1/reboot: 403 when not allowed, 409 when the busy slot is held; else takes the
  /// slot (Busy::Holder::Reboot), answers 202 {"boot_id": <before>, "reboot_in_ms": 500} and
  /// reboots on a thread 500 ms later. When this process is still there after it (a test
  /// command, a failed reboot(2)), the slot is freed.
  void request(httplib::Response& res);

 private:
  /// Reboots; false when systemd took the reboot over (the agent is being stopped), true
  /// when this process is still here after it (a test command, a failed reboot(2)).
  bool reboot_now() const;
  Registry& reg_;
  const bool allowed_;
  const std::string cmd_;
  std::thread thread_;
};

}  // namespace harness::agent
