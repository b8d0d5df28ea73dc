#pragma once
// The executor child of a case and its watcher (harness/agent/API.md "A case's states",
// "Cancel"): the executor starts in its own process group (child.hpp) with its record on
// disk (executor_record.hpp), and one watcher thread sleeps until it exits, its phase file
// changes or a cancel comes; no timer wakes it while the case runs (in the guest every wake
// is CPU charged to the case).
#include "harness/agent/cases/registry.hpp"

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace harness::agent {

class ExecutorWatcher {
 public:
  /// Called on the watcher thread once the executor has exited and been reaped, with its
  /// exit code (128+signal when a signal ended it); the case is then `finishing`.
  using OnExit = std::function<void(const std::shared_ptr<CaseRec>&, int exit_code)>;

  ExecutorWatcher(Registry& reg, OnExit on_exit);
  /// Joins the watcher (the running case's executor is not signalled: it ends on its own).
  ~ExecutorWatcher();
  ExecutorWatcher(const ExecutorWatcher&) = delete;
  ExecutorWatcher& operator=(const ExecutorWatcher&) = delete;

  /// Starts `argv` for case `c` (stdin /dev/null, stdout and stderr appended to
  /// <dir>/executor.log), writes its executor.json (a failure is logged, the case runs
  /// on), makes the case `running` (a cancel that came meanwhile sends SIGTERM at once)
  /// and watches it. Joins the previous case's watcher first. Throws std::runtime_error
  /// when the executor cannot be started (nothing is then watched).
  void start(const std::shared_ptr<CaseRec>& c, const std::vector<std::string>& argv);

  /// POST /v1/cases/{id}/cancel of a case that is not final and not yet cancelled:
  /// cancel_requested, the SIGKILL deadline (now + grace_s), SIGTERM to a running
  /// executor's group, and the watcher told to mind the deadline. Nothing otherwise.
  void cancel(const std::shared_ptr<CaseRec>& c);

 private:
  void watch(std::shared_ptr<CaseRec> c, ChildHandle child, int phase_fd);
  /// One sleep of the watcher; false once the executor has exited.
  bool sleep_once(const std::shared_ptr<CaseRec>& c, const ChildHandle& child, int phase_fd, bool& killed);

  Registry& reg_;
  OnExit on_exit_;
  std::thread thread_;
  int wake_fd_;  ///< eventfd written by a cancel
};

/// An inotify descriptor on `out_dir` for the executor's phase file (renamed into place:
/// IN_MOVED_TO, or written: IN_CLOSE_WRITE), or -1 when inotify is unavailable (the phase
/// is then still read on every status request).
int watch_phase_file(const std::filesystem::path& out_dir);

/// True when the inotify events waiting on `fd` (all drained) name the file "phase".
bool phase_file_changed(int fd);

}  // namespace harness::agent
