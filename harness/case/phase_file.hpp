#pragma once
// The running case's phase as the agent reads it: <out dir>/phase (harness/agent/API.md),
// one word (warmup | pressure | recovery | restoration), replaced atomically (write +
// rename) when the phase changes. A progress display only: a write that fails never fails
// the case.
#include <string>

namespace harness::case_ {

class PhaseFile {
 public:
  explicit PhaseFile(std::string out_dir) : out_dir_(std::move(out_dir)) {}
  /// Writes `phase` when it differs from the last one written.
  void report(const std::string& phase);
  /// The agent may have shown `pressure` (or a later phase of the schedule) to the runner:
  /// from here on a failure is `lost`, never `infra_failed` (docs/PROTOCOL.md; the runner
  /// decides a vanished case by the same phase).
  bool pressure_reported() const { return pressure_reported_; }

 private:
  std::string out_dir_, last_;
  bool pressure_reported_ = false;
};

}  // namespace harness::case_
