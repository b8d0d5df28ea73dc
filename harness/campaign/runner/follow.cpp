// The Follow step of an attempt (worker.hpp): polls the submitted (or taken over) case until
// it is final (-> Import) or the lost rule (lost_rule.hpp) says it vanished (-> Judge),
// gathering the rule's evidence: the agent's answers, the silence episodes (silence_log.hpp),
// the engine's liveness and the guest's boot ids.
//
// After the first answer, each request asks the agent to hold its answer until the case's
// state or phase changes (runner.status_wait_ms), so the agent is asked about once per phase
// instead of every poll interval. An answer that comes sooner without a change (an agent that
// does not wait) is followed by the rest of the poll interval. While the agent is silent the
// requests are plain, so its first answer ends the silence at once.
#include "harness/campaign/runner/worker.hpp"

#include <thread>

namespace harness::campaign {

std::int64_t Worker::case_deadline_unix_ns(const Seen& seen) const {
  const std::int64_t s = kStartLeadS + c_.warmup_s + c_.pressure_s + c_.recovery_s + c_.restoration_timeout_s +
                         opt_.silence.deadline_margin_s;
  return seen.submitted_unix_ns + s * 1'000'000'000LL;
}

Evidence Worker::evidence(const Attempt& at) const {
  Evidence e;
  e.phase_seen = at.seen.phase;
  e.now_unix_ns = unix_now_ns();
  e.submitted_unix_ns = at.seen.submitted_unix_ns;
  e.warmup_s = c_.warmup_s;
  e.before_pressure_grace = std::max(opt_.silence.before_pressure, std::chrono::milliseconds(c_.poll_interval_ms) * 10);
  e.deadline_unix_ns = case_deadline_unix_ns(at.seen);
  e.deadline_margin_s = opt_.silence.deadline_margin_s;
  e.case_timeout_s = c_.case_timeout_s;
  return e;
}

GuestLiveness Worker::liveness(Attempt& at, SilenceLog& silence) {
  const pool::Liveness l = instance_.liveness();  // Unknown when the engine cannot tell
  if (silence.note_liveness(at.rec.detail, pool::to_string(l), unix_now_ns())) update_inflight(*db_, at.rec);
  return l == pool::Liveness::Gone ? GuestLiveness::Gone
                                   : l == pool::Liveness::Running ? GuestLiveness::Running : GuestLiveness::Unknown;
}

void Worker::follow(Attempt& at) {
  AttemptRecord& a = at.rec;
  if (!a.detail.is_object()) a.detail = nlohmann::json::object();
  // The boot the case runs on: the one recorded before submission, else the agent's now.
  std::string boot = a.detail.contains("boot_id") && a.detail["boot_id"].is_string()
                         ? a.detail["boot_id"].get<std::string>()
                         : boot_id_now();
  if (!boot.empty() && !a.detail.contains("boot_id")) a.detail["boot_id"] = boot;
  SilenceLog silence;
  const std::chrono::milliseconds hold(c_.status_wait_ms);
  bool answered = false;
  // Judge with the rule's ruling, cancelling a case the runner timed out (best effort: the
  // timeout is judged whatever the cancel did; the guest is booted afresh for the next case).
  const auto vanished = [&](const Ruling& r) {
    if (r.decider == Decider::CaseTimeout) (void)client_->cancel(at.agent_id);
    at.ruling = r;
    at.step = Step::Judge;
  };
  for (;;) {
    const auto asked = SilenceLog::Clock::now();
    const std::int64_t asked_unix_ns = unix_now_ns();
    const agent::CaseStatus seen_st = at.status;
    const auto held = answered && !silence.open() ? hold : std::chrono::milliseconds(0);
    const auto reply = held.count() > 0 ? client_->wait_status(at.agent_id, seen_st, held) : client_->status(at.agent_id);
    bool changed = true;
    if (reply.is(agent::FailureKind::NotFound)) {
      if (silence.open()) close_silence(a, silence);
      Evidence e = evidence(at);
      e.said = AgentSaid::CaseUnknown;
      e.agent_error = "agent no longer knows the case (guest restarted?): " + reply.message();
      return vanished(judge_vanished(e));
    }
    Evidence e = evidence(at);
    if (reply.ok()) {
      at.status = reply.value();
      changed = !answered || at.status.state != seen_st.state || at.status.phase != seen_st.phase;
      answered = true;
      at.seen.last_seen_unix_ns = unix_now_ns();
      if (silence.open()) {
        // Did the guest reboot while the agent was silent? A new boot id means the case's
        // kernel is gone, whatever the agent says of the case now.
        close_silence(a, silence);
        Evidence back = e;
        back.said = AgentSaid::Returned;
        back.boot_at_start = boot;
        back.boot_now = boot_id_now();
        SilenceLog::note_boot_id(a.detail, boot);
        SilenceLog::note_boot_id(a.detail, back.boot_now);
        update_inflight(*db_, a);
        if (const auto r = judge_vanished(back); r.verdict != Verdict::KeepFollowing) return vanished(r);
        if (boot.empty()) boot = back.boot_now;
      }
      if (!at.status.phase.empty() && at.status.phase != "done" && at.status.phase != at.seen.phase) {
        at.seen.phase = at.status.phase;
        put_seen(a, at.seen);
        update_inflight(*db_, a);  // a takeover after a kill knows the phase reached
      }
      if (!at.status.phase.empty()) prog_.phase(guest_.name, at.status.phase);
      if (at.status.finished()) {
        put_seen(a, at.seen);
        at.step = Step::Import;
        return;
      }
      e = evidence(at);
    } else {
      if (!silence.open()) open_silence(at, silence, reply.message(), asked, asked_unix_ns, held);
      e.said = AgentSaid::Silent;
      e.agent_error = reply.message();
      e.silent_for = silence.silent_for(SilenceLog::Clock::now());
      if (pressure_started(at.seen.phase)) e.liveness = liveness(at, silence);
      e.now_unix_ns = unix_now_ns();  // after the engine's answer: the deadline is judged now
    }
    if (const auto r = judge_vanished(e); r.verdict != Verdict::KeepFollowing) return vanished(r);
    if (!changed || silence.open()) std::this_thread::sleep_until(asked + std::chrono::milliseconds(c_.poll_interval_ms));
  }
}

void Worker::open_silence(Attempt& at, SilenceLog& silence, const std::string& error, SilenceLog::Clock::time_point asked,
                          std::int64_t asked_unix_ns, std::chrono::milliseconds held) {
  // A held request's answer was due at the latest `held` after it was sent: the silence
  // starts there (or now, if sooner), never while the agent was entitled to wait.
  const auto due = SilenceLog::start_offset(asked, SilenceLog::Clock::now(), held);
  silence.open_episode(at.rec.detail, at.seen.phase, error, asked + due,
                       asked_unix_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(due).count(),
                       case_deadline_unix_ns(at.seen));
  prog_.note(guest_.name, "agent silent (" + error + "); last phase seen: " +
                              (at.seen.phase.empty() ? std::string("none") : at.seen.phase));
  update_inflight(*db_, at.rec);
}

void Worker::close_silence(AttemptRecord& a, SilenceLog& silence) {
  const std::int64_t ms = silence.close_episode(a.detail, unix_now_ns());
  prog_.note(guest_.name, "agent answers again after " + std::to_string(ms) + " ms of silence");
}

}  // namespace harness::campaign
