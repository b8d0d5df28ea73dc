// <out dir>/phase for the agent (phase_file.hpp).
#include "harness/case/run/phase_file.hpp"

#include "harness/case/run/durable_file.hpp"

#include <filesystem>
#include <stdexcept>

namespace harness::case_ {

void PhaseFile::report(const std::string& phase) {
  if (phase == last_) return;
  last_ = phase;
  if (phase == "pressure" || phase == "recovery") pressure_reported_ = true;
  try {
    write_file_durably(std::filesystem::path(out_dir_) / "phase", phase + "\n");
  } catch (const std::runtime_error&) {
    // never fails the case (phase_file.hpp): the runner has seen the phase through the
    // agent's status and decides a vanished case by what it saw
  }
}

}  // namespace harness::case_
