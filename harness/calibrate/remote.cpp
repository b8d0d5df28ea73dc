// Calibration cases through an agent, one after the other (remote.hpp).
#include "harness/calibrate/remote.hpp"

#include "harness/digest/sha256.hpp"

#include <filesystem>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace harness::calibrate {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void say(const RemoteOptions& o, const std::string& line) {
  if (o.progress) std::fprintf(o.progress, "harness calibrate: %s\n", line.c_str());
}

/// Submits the case, or finds it already on the agent. Done once the agent holds it,
/// otherwise the failure (a Conflict when the agent stayed busy past the case timeout).
agent::Reply<agent::Done> submit_or_adopt(agent::AgentClient& client, const RemoteCase& c, const RemoteOptions& o) {
  const auto deadline = Clock::now() + o.case_timeout;
  bool said_busy = false;
  for (;;) {
    const auto submitted = client.submit(c.spec);
    if (submitted.ok()) {
      say(o, c.case_id + ": submitted to " + client.url());
      return agent::Done{};
    }
    if (!submitted.is(agent::FailureKind::Conflict)) return submitted.failure();
    // Either this id is already on the agent (an earlier, killed run submitted it: follow
    // it) or the agent runs another case (wait for it to finish).
    const auto known = client.status(c.case_id);
    if (known.ok()) {
      say(o, c.case_id + ": already on the agent (an earlier run submitted it); following it");
      return agent::Done{};
    }
    if (!known.is(agent::FailureKind::NotFound)) return known.failure();
    if (Clock::now() >= deadline) {
      agent::Failure busy = submitted.failure();
      busy.message = "agent busy past the case timeout: " + busy.message;
      return busy;
    }
    if (!said_busy) say(o, c.case_id + ": agent busy (" + submitted.message() + "); waiting");
    said_busy = true;
    std::this_thread::sleep_for(o.poll);
  }
}

/// Polls the case until it is final or the case timeout passed: its last status.
agent::Reply<agent::CaseStatus> follow(agent::AgentClient& client, const RemoteCase& c, const RemoteOptions& o,
                                       const std::string& counter) {
  const auto deadline = Clock::now() + o.case_timeout;
  std::string phase;
  for (;;) {
    auto s = client.status(c.case_id);
    if (!s.ok()) return s;
    if (s.value().phase != phase) {
      phase = s.value().phase;
      say(o, fmt::format("{} ({}): {} {}", c.case_id, counter, s.value().state, s.value().phase));
    }
    if (s.value().finished() || Clock::now() >= deadline) return s;
    std::this_thread::sleep_for(o.poll);
  }
}

/// The failed case's detail for `f`; an unauthorised token stops the run (std::runtime_error).
std::string failure_detail(const agent::AgentClient& client, const agent::Failure& f) {
  if (f.kind == agent::FailureKind::Unauthorised)
    throw std::runtime_error(client.url() + ": token refused (" + f.message + ")");
  std::string detail = f.kind == agent::FailureKind::NotQualified ? "host not qualified: " + f.message : f.message;
  for (const auto& why : f.reasons) detail += "; " + why;
  return detail;
}

/// Runs one case whose bundle is not there yet: submitted (or adopted), followed, its bundle
/// downloaded to `bundle`; or cancelled when it did not finish in time.
RemoteResult run_one(agent::AgentClient& client, const RemoteCase& c, const fs::path& bundle, const RemoteOptions& o,
                     const std::string& counter) {
  RemoteResult r{c.case_id, "failed", ""};
  if (const auto held = submit_or_adopt(client, c, o); !held.ok()) {
    r.detail = failure_detail(client, held.failure());
    return r;
  }
  const auto s = follow(client, c, o, counter);
  if (!s.ok()) {
    r.detail = failure_detail(client, s.failure());
    return r;
  }
  if (!s.value().finished()) {
    r.detail = fmt::format("not finished after {} s (state {}, phase {}); cancelled", o.case_timeout.count(),
                           s.value().state, s.value().phase);
    // Best effort: the case is already recorded as not finished; an unreachable agent cannot be cancelled.
    (void)client.cancel(c.case_id);
    return r;
  }
  agent::Reply<agent::Done> got = agent::Done{};
  try {
    got = client.download_bundle(c.case_id, bundle.string());
  } catch (const std::exception& e) {  // the bundle's file cannot be written here: this case fails, the next runs
    r.detail = e.what();
    return r;
  }
  if (!got.ok()) {
    r.detail = failure_detail(client, got.failure());
    return r;
  }
  r.result = "downloaded";
  r.detail = s.value().state + (s.value().error.empty() ? "" : ": " + s.value().error);
  say(o, c.case_id + ": " + r.detail + ", bundle " + bundle.string());
  return r;
}

}  // namespace

std::string run_case_id(const std::string& point_name, const std::string& grid_key) {
  return "calib-" + point_name + "-" + digest::sha256_hex(grid_key).substr(0, 8);
}

std::vector<RemoteResult> run_through_agent(agent::AgentClient& client, const std::vector<RemoteCase>& cases,
                                            const std::string& bundle_dir, const RemoteOptions& o) {
  fs::create_directories(bundle_dir);
  std::vector<RemoteResult> out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const RemoteCase& c = cases[i];
    const fs::path bundle = fs::path(bundle_dir) / c.bundle_file;
    RemoteResult r{c.case_id, "failed", ""};
    if (fs::exists(bundle)) {
      r.result = "skipped";
      r.detail = "bundle already in " + bundle_dir;
      say(o, fmt::format("{} ({}/{}): bundle already there, not rerun", c.case_id, i + 1, cases.size()));
      out.push_back(r);
      continue;
    }
    r = run_one(client, c, bundle, o, fmt::format("{}/{}", i + 1, cases.size()));
    if (r.result == "failed") say(o, c.case_id + ": failed: " + r.detail);
    out.push_back(r);
  }
  return out;
}

}  // namespace harness::calibrate
