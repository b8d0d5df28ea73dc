// The reboot between cases (see reboot.hpp).
#include "harness/agent/routes/reboot.hpp"

#include "harness/agent/http/answer.hpp"
#include "harness/agent/cases/child.hpp"

#include <sys/reboot.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace harness::agent {

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

Rebooter::Rebooter(Registry& reg, bool allowed, std::string reboot_cmd)
    : reg_(reg), allowed_(allowed), cmd_(std::move(reboot_cmd)) {}

Rebooter::~Rebooter() {
  if (thread_.joinable()) thread_.join();
}

bool Rebooter::reboot_now() const {
  std::fflush(nullptr);
  // Through the agent's one start (child.hpp), not std::system: that one ignores SIGINT and
  // SIGQUIT in the whole agent while the command runs.
  if (!cmd_.empty()) {
    try {
      std::fprintf(stderr, "agent: reboot command exited with %d\n", run_command({"/bin/sh", "-c", cmd_}));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "agent: reboot command: %s\n", e.what());
    }
    return true;
  }
  // Under systemd an orderly reboot (services stopped, file systems unmounted); a plain init
  // (the local guests' /init) or a failed systemctl: sync + reboot(2).
  if (std::filesystem::exists("/run/systemd/system")) {
    try {
      if (run_command({"systemctl", "reboot"}) == 0) return false;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "agent: systemctl reboot: %s; rebooting with reboot(2)\n", e.what());
    }
  }
  ::sync();
  if (::reboot(RB_AUTOBOOT) != 0) std::fprintf(stderr, "agent: reboot(RB_AUTOBOOT) failed: %s\n", std::strerror(errno));
  return true;
}

void Rebooter::request(httplib::Response& res) {
  if (!allowed_) return send_error(res, 403, "reboot not allowed on this agent (start it with --allow-reboot)", "");
  {
    std::lock_guard<std::mutex> lk(reg_.mu);
    if (!reg_.busy.idle())
      return send_error(res, 409, reg_.busy.message(), "", {{"running_case_id", reg_.busy.holder_id()}});
    reg_.busy = Busy{Busy::Holder::Reboot, "", -1};
  }
  send_json(res, {{"boot_id", boot_id()}, {"reboot_in_ms", 500}}, 202);
  if (thread_.joinable()) thread_.join();
  thread_ = std::thread([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (!reboot_now()) return;  // systemd is stopping the agent: the slot stays held
    std::lock_guard<std::mutex> lk(reg_.mu);
    if (reg_.busy.holder == Busy::Holder::Reboot) reg_.busy = Busy{};
  });
}

}  // namespace harness::agent
