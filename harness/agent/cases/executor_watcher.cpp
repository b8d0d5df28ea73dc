// The executor child of a case and its watcher (see executor_watcher.hpp).
#include "harness/agent/cases/executor_watcher.hpp"

#include "harness/agent/cases/executor_record.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace harness::agent {

int watch_phase_file(const std::filesystem::path& out_dir) {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return -1;
  if (::inotify_add_watch(fd, out_dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool phase_file_changed(int fd) {
  bool phase = false;
  alignas(inotify_event) char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0)
    for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + off);
      if (e->len > 0 && std::strcmp(e->name, "phase") == 0) phase = true;
      off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  return phase;
}

ExecutorWatcher::ExecutorWatcher(Registry& reg, OnExit on_exit)
    : reg_(reg), on_exit_(std::move(on_exit)), wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

ExecutorWatcher::~ExecutorWatcher() {
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void ExecutorWatcher::start(const std::shared_ptr<CaseRec>& c, const std::vector<std::string>& argv) {
  if (thread_.joinable()) thread_.join();  // the previous case's: it has freed the busy slot
  const int phase_fd = watch_phase_file(c->dir / "out");  // before the executor can write it
  ChildHandle h;
  try {
    h = spawn_child(argv, (c->dir / "executor.log").string());
  } catch (...) {
    if (phase_fd >= 0) ::close(phase_fd);
    throw;
  }
  try {
    write_executor_record(c->dir, record_of(h.pid));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agent: case %s: %s (a restarted agent will not know its executor)\n", c->id.c_str(), e.what());
  }
  {
    std::lock_guard<std::mutex> lk(reg_.mu);
    c->child = h;
    c->state = CaseState::Running;
    reg_.bump();
    if (c->cancel_requested) {  // cancelled between the submission's check and the spawn
      c->kill_at = Clock::now() + std::chrono::seconds(c->grace_s);
      signal_child(h, SIGTERM);
    }
  }
  thread_ = std::thread([this, c, h, phase_fd] { watch(c, h, phase_fd); });
}

void ExecutorWatcher::cancel(const std::shared_ptr<CaseRec>& c) {
  std::lock_guard<std::mutex> lk(reg_.mu);
  if (is_final(c->state) || c->cancel_requested) return;
  c->cancel_requested = true;
  c->kill_at = Clock::now() + std::chrono::seconds(c->grace_s);
  if (c->child.pid > 0) signal_child(c->child, SIGTERM);
  reg_.bump();
  if (wake_fd_ >= 0) {  // the watcher now minds the SIGKILL deadline
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
}

bool ExecutorWatcher::sleep_once(const std::shared_ptr<CaseRec>& c, const ChildHandle& child, int phase_fd,
                                 bool& killed) {
  std::chrono::milliseconds wait{-1};
  {
    std::lock_guard<std::mutex> lk(reg_.mu);
    if (c->cancel_requested && !killed) {
      const auto now = Clock::now();
      if (now >= c->kill_at) {
        signal_child(child, SIGKILL);  // the executor ignored SIGTERM for the whole grace
        killed = true;
      } else {
        wait = std::chrono::ceil<std::chrono::milliseconds>(c->kill_at - now);
      }
    }
  }
  std::vector<pollfd> also;
  if (phase_fd >= 0) also.push_back({phase_fd, POLLIN, 0});
  if (wake_fd_ >= 0) also.push_back({wake_fd_, POLLIN, 0});
  if (wait_exit_or_readable(child, wait, also)) return false;
  bool phase = false;
  for (const auto& p : also) {
    if (!(p.revents & POLLIN)) continue;
    if (p.fd == phase_fd) {
      phase = phase_file_changed(phase_fd);
    } else {
      std::uint64_t v;
      (void)!::read(p.fd, &v, sizeof v);
    }
  }
  if (phase) {
    std::lock_guard<std::mutex> lk(reg_.mu);
    reg_.bump();  // waiting status requests are told
  }
  return true;
}

void ExecutorWatcher::watch(std::shared_ptr<CaseRec> c, ChildHandle child, int phase_fd) {
  bool killed = false;
  while (sleep_once(c, child, phase_fd, killed)) {
  }
  if (phase_fd >= 0) ::close(phase_fd);
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> lk(reg_.mu);
    cancelled = c->cancel_requested;
    c->child = ChildHandle{};  // no signal from here on: the pid is about to be released
    c->state = CaseState::Finishing;
    reg_.bump();
  }
  // The leader has exited but is not reaped yet, so its process-group id is still its own:
  // a cancelled case's stragglers (group members that ignored SIGTERM) are killed now. The
  // executor itself has restored the host before exiting.
  if (cancelled) ::kill(-child.pid, SIGKILL);
  const int code = reap_child(child);
  on_exit_(c, code);
}

}  // namespace harness::agent
