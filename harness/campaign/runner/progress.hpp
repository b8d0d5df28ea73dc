#pragma once
// Live progress of a campaign run: cases done/total, per-VM current case and phase, ETA.
// On a terminal it redraws a block of lines once per second (ANSI cursor-up); otherwise
// it prints one plain line per event (case started, phase change, case finished).
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <condition_variable>

namespace harness::campaign {

class Progress {
 public:
  /// `total`: cases still to run in this invocation; `done_before`: completed or lost earlier.
  /// `tty`: redraw mode; `out`: where to write (stderr by default).
  Progress(int total_planned, int done_before, bool tty, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// A VM starts `case_id` (attempt n). `taken_over`: the case was started by an interrupted
  /// runner and this run only follows it to its end; its duration here says nothing of a case's,
  /// so it never enters the ETA's throughput (a resumed campaign printed "ETA 0 min 00 s" after
  /// judging such a case at once).
  void start(const std::string& vm, const std::string& case_id, int attempt, bool taken_over = false);
  /// The agent reports a phase (setup|warmup|pressure|recovery|restoration|done).
  void phase(const std::string& vm, const std::string& phase);
  /// The case ended with status completed | lost | infra_failed; `note` is shown with it.
  /// Completed and lost cases count as done (outcomes; lost ones are also counted apart).
  /// `gave_up`: infra_failed and no retries left (counted as left infra_failed).
  void finish(const std::string& vm, const std::string& case_id, const std::string& status, const std::string& note,
              bool gave_up = false);
  /// A free-form line (e.g. "vm0: rebooting guest").
  void note(const std::string& vm, const std::string& text);
  /// Stops the redraw thread and prints the final block.
  void stop();

 private:
  struct VmLine {
    std::string case_id, phase, last;
    int attempt = 0;
    bool taken_over = false;
    std::chrono::steady_clock::time_point since;
  };
  void draw_locked(bool final);
  std::string eta_locked() const;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int planned_, done_, failed_ = 0, lost_ = 0;
  int finished_now_ = 0;  ///< outcomes of cases this run started (the ETA's throughput)
  bool tty_;
  std::FILE* out_;
  int drawn_lines_ = 0;
  std::map<std::string, VmLine> vms_;
  /// When this run started its first case (not a taken-over one): the ETA's clock.
  std::optional<std::chrono::steady_clock::time_point> t0_;
  std::thread thread_;
};

}  // namespace harness::campaign
