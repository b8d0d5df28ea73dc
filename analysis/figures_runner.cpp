// Figure script runner (see figures_runner.hpp).
#include "analysis/figures_runner.hpp"
#include "analysis/case_columns.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <sys/wait.h>

namespace analysis {
namespace {
std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}
std::string quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}
/// What the forest plot draws, in the keys of harness_analysis.primary() (analysis/python/module.cpp).
nlohmann::json primary_for_figures(const PrimaryResult& pr) {
  nlohmann::json comps = nlohmann::json::array();
  for (const auto& c : pr.comparisons)
    comps.push_back({{"label", c.label},
                     {"estimate", c.estimate},
                     {"lower", c.lower},
                     {"upper", c.upper},
                     {"corrected_lower", c.corrected_lower},
                     {"corrected_upper", c.corrected_upper},
                     {"percent_change", c.percent_change},
                     {"triplets", c.triplets}});
  return {{"comparisons", comps},
          {"level", pr.level},
          {"assessable", pr.verdict.assessable},
          {"general_benefit", pr.verdict.general_benefit},
          {"harm", pr.verdict.harm}};
}
}  // namespace

std::vector<std::string> run_figures(const std::string& db_path, const std::string& out_dir, int replicates,
                                     unsigned long long seed, const std::string& timeseries_case,
                                     const PrimaryResult* primary, const CampaignData* data) {
  const std::string py = env_or("HARNESS_PYTHON", "/usr/bin/python3");
  const std::string pydir = env_or("HARNESS_ANALYSIS_PYDIR", HK_ANALYSIS_PYDIR);
  const std::string script = env_or("HARNESS_FIGURES_SCRIPT", HK_ANALYSIS_SRCDIR "/figures.py");
  if (!std::filesystem::exists(script)) throw std::runtime_error("figures: script not found: " + script);
  bool module_found = false;
  if (std::filesystem::is_directory(pydir))
    for (const auto& e : std::filesystem::directory_iterator(pydir))
      if (e.path().filename().string().rfind("harness_analysis", 0) == 0) module_found = true;
  if (!module_found)
    throw std::runtime_error("figures: pybind11 module harness_analysis not found in " + pydir +
                             " (build target harness_analysis, or set HARNESS_ANALYSIS_PYDIR)");
  std::string cmd = fmt::format("PYTHONPATH={} MPLBACKEND=Agg {} {} --db {} --out {} --replicates {} --seed {}",
                                quote(pydir), quote(py), quote(script), quote(db_path), quote(out_dir), replicates,
                                seed);
  std::filesystem::create_directories(out_dir);  // the hand-off files go there before the script runs
  const std::string primary_file = (std::filesystem::path(out_dir) / ".figures_primary.json").string();
  if (primary) {
    std::ofstream f(primary_file);
    f << primary_for_figures(*primary).dump();
    if (!f) throw std::runtime_error("figures: cannot write " + primary_file);
    cmd += " --primary-json " + quote(primary_file);
  }
  const std::string cases_file = (std::filesystem::path(out_dir) / ".figures_cases.json").string();
  if (data) {
    std::ofstream f(cases_file);
    f << case_columns_json(case_columns(*data)).dump();
    if (!f) throw std::runtime_error("figures: cannot write " + cases_file);
    cmd += " --cases-json " + quote(cases_file);
  }
  if (!timeseries_case.empty()) cmd += " --case " + quote(timeseries_case);
  const int rc = std::system(cmd.c_str());
  if (primary) std::filesystem::remove(primary_file);
  if (data) std::filesystem::remove(cases_file);
  if (rc != 0)
    throw std::runtime_error(fmt::format("figures: `{}` failed (status {})", cmd, WIFEXITED(rc) ? WEXITSTATUS(rc) : rc));
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(out_dir))
    if (e.path().extension() == ".png") out.push_back(e.path().string());
  // Report order: the primary result first, then p99 by regime, then the rest by name.
  auto rank = [](const std::string& p) {
    const auto f = std::filesystem::path(p).filename().string();
    return f == "forest.png" ? 0 : f == "p99_by_regime.png" ? 1 : 2;
  };
  std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  return out;
}

}  // namespace analysis
