// <out dir>/phase for the agent (phase_file.hpp).
#include "harness/case/phase_file.hpp"

#include <filesystem>
#include <fstream>

namespace harness::case_ {

void PhaseFile::report(const std::string& phase) {
  if (phase == last_) return;
  last_ = phase;
  if (phase == "pressure" || phase == "recovery") pressure_reported_ = true;
  const auto dst = std::filesystem::path(out_dir_) / "phase";
  const auto tmp = std::filesystem::path(out_dir_) / "phase.tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << phase << "\n";
    if (!f) return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, dst, ec);
}

}  // namespace harness::case_
