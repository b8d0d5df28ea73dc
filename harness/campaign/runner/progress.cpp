// Progress display (see progress.hpp).
#include "harness/campaign/runner/progress.hpp"

#include <fmt/format.h>

#include <cmath>

namespace harness::campaign {

Progress::Progress(int total_planned, int done_before, bool tty, std::FILE* out)
    : planned_(total_planned), done_(done_before), tty_(tty), out_(out) {
  if (tty_)
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lk(mu_);
      while (!stopping_) {
        draw_locked(false);
        cv_.wait_for(lk, std::chrono::seconds(1));
      }
    });
}

Progress::~Progress() { stop(); }

void Progress::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lk(mu_);
  if (tty_) draw_locked(true);
}

std::string Progress::eta_locked() const {
  if (finished_now_ == 0 || !t0_) return "ETA unknown";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - *t0_).count();
  const int left = planned_ - done_ - failed_;
  // Cases finish in parallel across VMs: observed throughput covers that.
  const double eta = elapsed / finished_now_ * std::max(0, left);
  return fmt::format("ETA {:.0f} min {:02.0f} s", std::floor(eta / 60), std::fmod(eta, 60));
}

void Progress::draw_locked(bool final) {
  if (!tty_) return;
  for (int i = 0; i < drawn_lines_; ++i) std::fputs("\x1b[1A\x1b[2K", out_);
  drawn_lines_ = 0;
  const auto now = std::chrono::steady_clock::now();
  std::fputs(fmt::format("campaign: {}/{} done ({} lost in this run), {} left infra_failed, {}{}\n", done_, planned_,
                         lost_, failed_, eta_locked(), final ? " (stopped)" : "")
                 .c_str(),
             out_);
  ++drawn_lines_;
  for (const auto& [vm, l] : vms_) {
    const long secs = std::chrono::duration_cast<std::chrono::seconds>(now - l.since).count();
    std::string line = l.case_id.empty() ? fmt::format("  {}: idle  {}", vm, l.last)
                                         : fmt::format("  {}: {} (attempt {}) phase {} {}s  {}", vm, l.case_id,
                                                       l.attempt, l.phase.empty() ? "-" : l.phase, secs, l.last);
    std::fputs((line + "\n").c_str(), out_);
    ++drawn_lines_;
  }
  std::fflush(out_);
}

void Progress::start(const std::string& vm, const std::string& case_id, int attempt, bool taken_over) {
  std::lock_guard<std::mutex> lk(mu_);
  auto& l = vms_[vm];
  l.case_id = case_id;
  l.attempt = attempt;
  l.taken_over = taken_over;
  l.phase.clear();
  l.since = std::chrono::steady_clock::now();
  if (!taken_over && !t0_) t0_ = l.since;
  if (!tty_) std::fprintf(out_, "%s: start %s (attempt %d)\n", vm.c_str(), case_id.c_str(), attempt);
}

void Progress::phase(const std::string& vm, const std::string& phase) {
  std::lock_guard<std::mutex> lk(mu_);
  auto& l = vms_[vm];
  if (l.phase == phase) return;
  l.phase = phase;
  if (!tty_) std::fprintf(out_, "%s: %s phase %s\n", vm.c_str(), l.case_id.c_str(), phase.c_str());
}

void Progress::finish(const std::string& vm, const std::string& case_id, const std::string& status,
                      const std::string& note, bool gave_up) {
  std::lock_guard<std::mutex> lk(mu_);
  auto& l = vms_[vm];
  if (status == "completed" || status == "lost") {  // both are outcomes (PROTOCOL.md)
    ++done_;
    if (!l.taken_over) ++finished_now_;
    if (status == "lost") ++lost_;
  } else if (gave_up) {
    ++failed_;
  }
  l.last = case_id + " " + status + (note.empty() ? "" : " (" + note + ")");
  l.case_id.clear();
  if (!tty_)
    std::fprintf(out_, "%s: %s %s%s  [%d/%d done, %s]\n", vm.c_str(), case_id.c_str(), status.c_str(),
                 note.empty() ? "" : (" (" + note + ")").c_str(), done_, planned_, eta_locked().c_str());
}

void Progress::note(const std::string& vm, const std::string& text) {
  std::lock_guard<std::mutex> lk(mu_);
  vms_[vm].last = text;
  if (!tty_) std::fprintf(out_, "%s: %s\n", vm.c_str(), text.c_str());
}

}  // namespace harness::campaign
