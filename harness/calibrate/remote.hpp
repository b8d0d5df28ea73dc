#pragma once
// `harness calibrate run --hosts`: the calibration cases run through the agent of a VM the
// study will use (KVM, a libvirt lab, a cloud or bare VM listed in a hosts file) instead of in
// a local guest, because the episode's counts depend on the CPU the pressure generator gets.
#include "harness/agent/client/client.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness::calibrate {

/// One calibration case: its case id on the agent, its spec (spec_for(), harness/case/SPEC.md,
/// with that case id) and the file name of its bundle in the bundle directory.
struct RemoteCase {
  std::string case_id;
  nlohmann::json spec;
  std::string bundle_file;  ///< e.g. calib-a320-s128-v250-m300.db
};

struct RemoteOptions {
  std::chrono::milliseconds poll{2000};  ///< GET /v1/cases/{id} period
  /// Bound on one case from submission to a final state, and on waiting for an agent busy
  /// with someone else's case; past it the case is reported as failed and the next one runs.
  std::chrono::seconds case_timeout{1800};
  std::FILE* progress = stderr;  ///< one line per submission, phase change and bundle; null = quiet
};

/// What happened to one case: "skipped" (its bundle was already in the directory),
/// "downloaded" (bundle fetched; the case's own status is in the bundle), or "failed".
struct RemoteResult {
  std::string case_id, result, detail;  ///< detail: agent state or the error, "" when none
};

/// "calib-<point>-<8 hex>": the point's name and the first 8 hex digits of the SHA-256 of
/// `grid_key` (the grid file's JSON and the output directory), so one command rerun finds its
/// cases on the agent and a grid with other options or another directory does not.
std::string run_case_id(const std::string& point_name, const std::string& grid_key);

/// Runs `cases` one after the other through `client`, each bundle saved as
/// `bundle_dir`/<bundle_file> (directory created). Resumable: a case whose bundle is there is
/// skipped, and a case id the agent already holds (a run killed after submitting) is followed
/// and downloaded, never submitted again; the caller makes case ids unique to the grid and
/// its options (run_case_id), so another grid never adopts this one's case. A 409 from an agent busy with another case is retried
/// every poll until case_timeout. One case's failure (spec refused, host not qualified,
/// timeout, agent unreachable) is reported in its result and the next case still runs; an
/// unauthorised token stops the run (std::runtime_error naming the URL).
std::vector<RemoteResult> run_through_agent(agent::AgentClient& client, const std::vector<RemoteCase>& cases,
                                            const std::string& bundle_dir, const RemoteOptions& o = {});

}  // namespace harness::calibrate
