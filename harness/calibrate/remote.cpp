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

/// Submits the case, or finds it already on the agent. Returns "" once the agent holds it,
/// otherwise why not (the case then fails).
std::string submit_or_adopt(agent::AgentClient& client, const RemoteCase& c, const RemoteOptions& o) {
  const auto deadline = Clock::now() + o.case_timeout;
  bool said_busy = false;
  for (;;) {
    try {
      client.submit(c.spec);
      say(o, c.case_id + ": submitted to " + client.url());
      return "";
    } catch (const agent::AgentConflict& e) {
      // Either this id is already on the agent (an earlier, killed run submitted it: follow
      // it) or the agent runs another case (wait for it to finish).
      try {
        client.status(c.case_id);
        say(o, c.case_id + ": already on the agent (an earlier run submitted it); following it");
        return "";
      } catch (const agent::CaseNotFound&) {
        // not on the agent: submit it below
      }
      if (Clock::now() >= deadline) return std::string("agent busy past the case timeout: ") + e.what();
      if (!said_busy) say(o, c.case_id + ": agent busy (" + e.what() + "); waiting");
      said_busy = true;
      std::this_thread::sleep_for(o.poll);
    }
  }
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
    try {
      if (auto why = submit_or_adopt(client, c, o); !why.empty()) {
        r.detail = why;
      } else {
        const auto deadline = Clock::now() + o.case_timeout;
        std::string phase;
        agent::CaseStatus s;
        for (;;) {
          s = client.status(c.case_id);
          if (s.phase != phase) {
            phase = s.phase;
            say(o, fmt::format("{} ({}/{}): {} {}", c.case_id, i + 1, cases.size(), s.state, s.phase));
          }
          if (s.finished() || Clock::now() >= deadline) break;
          std::this_thread::sleep_for(o.poll);
        }
        if (!s.finished()) {
          r.detail = fmt::format("not finished after {} s (state {}, phase {}); cancelled", o.case_timeout.count(),
                                 s.state, s.phase);
          try {
            client.cancel(c.case_id);
          } catch (const agent::AgentError&) {
            // best effort: the case is already recorded as not finished; an unreachable agent cannot be cancelled
          }
        } else {
          client.download_bundle(c.case_id, bundle.string());
          r.result = "downloaded";
          r.detail = s.state + (s.error.empty() ? "" : ": " + s.error);
          say(o, c.case_id + ": " + r.detail + ", bundle " + bundle.string());
        }
      }
    } catch (const agent::AgentUnauthorised& e) {
      throw std::runtime_error(client.url() + ": token refused (" + e.what() + ")");
    } catch (const agent::NotQualified& e) {
      r.detail = std::string("host not qualified: ") + e.what();
      for (const auto& why : e.reasons()) r.detail += "; " + why;
    } catch (const std::exception& e) {
      r.detail = e.what();
    }
    if (r.result == "failed") say(o, c.case_id + ": failed: " + r.detail);
    out.push_back(r);
  }
  return out;
}

}  // namespace harness::calibrate
