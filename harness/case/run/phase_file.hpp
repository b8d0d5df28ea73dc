#pragma once
// The running case's phase as the agent reads it: <out dir>/phase (harness/agent/API.md),
// one word (warmup | pressure | recovery | restoration), replaced when the phase changes
// durably (durable_file.hpp: fsync of the file and its directory), so that an agent that
// restarts after a power cut settles the case by the phase it had shown (lost from pressure
// on, harness/agent/cases/restart_settling.hpp). A write that fails never fails the case.
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
