#pragma once
// Runs analysis/report/figures.py (matplotlib, Agg) with Debian's /usr/bin/python3 and PYTHONPATH set to
// the build dir of the pybind11 module `harness_analysis` (analysis/README.md: figures from the Python module).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/data/campaign_data.hpp"
#include "analysis/tables/primary.hpp"

namespace analysis {

/// Produces PNGs in out_dir (analysis/report/figures.py: forest plot, trade-off (from `tradeoff`), p99 by regime x configuration, one
/// case's time series, zram time course, reclaim execution). `timeseries_case`: the case of the
/// time-series figure ("" = the script's default, the first completed bounded-reclaim case).
/// Returns the PNG paths in out_dir, forest.png, tradeoff.png and p99_by_regime.png first, then by name. Environment overrides: HARNESS_PYTHON (interpreter),
/// HARNESS_ANALYSIS_PYDIR (module dir), HARNESS_FIGURES_SCRIPT. Errors: std::runtime_error with the
/// command line and exit status when the script fails or the module is not built.
/// `primary`: the primary result the caller already computed (`harness analyze`); given, it is
/// handed to the script as JSON (out_dir/.figures_primary.json, removed afterwards) and the
/// forest plot draws it instead of running the bootstrap a second time (same numbers: the
/// same DB, replicates and seed). nullptr: the script computes it (replicates, seed).
/// `data`: the campaign the caller already loaded from db_path; given, its per-case columns
/// (case_columns.hpp) are handed over as out_dir/.figures_cases.json (removed afterwards) and
/// the script does not read every request again (on the 180-case benchmark DB that read was
/// about a fifth of the figure step). nullptr: the script loads the campaign itself.
/// `tradeoff`: the report's extra.tradeoff (arm_effects.hpp tradeoff_json), handed over with the
/// primary result; the script draws tradeoff.png from it (null: no trade-off figure).
std::vector<std::string> run_figures(const std::string& db_path, const std::string& out_dir, int replicates,
                                     unsigned long long seed, const std::string& timeseries_case = "",
                                     const PrimaryResult* primary = nullptr, const CampaignData* data = nullptr,
                                     const nlohmann::json& tradeoff = nullptr);

/// The figures script started before the data exist (`harness analyze`: at the start of the
/// command, so that the interpreter start and the numpy/matplotlib imports overlap the loading
/// and the bootstrap). The script runs with --handoff-stdin: after its imports it waits on its
/// stdin (one end of a socket pair) for one line, the JSON object {"primary_json": FILE,
/// "cases_json": FILE}; the files are the same hand-off as run_figures' (out_dir/.figures_primary.json,
/// out_dir/.figures_cases.json, removed afterwards). End of file instead of the line (the
/// object destroyed without finish(), e.g. the command failed after the start): the script exits
/// without drawing, and the destructor reaps it.
class FiguresProcess {
 public:
  /// Starts the script (same environment overrides and errors as run_figures for the module and
  /// the script). `timeseries_case`: as for run_figures.
  FiguresProcess(const std::string& db_path, const std::string& out_dir, const std::string& timeseries_case = "");
  ~FiguresProcess();
  FiguresProcess(const FiguresProcess&) = delete;
  FiguresProcess& operator=(const FiguresProcess&) = delete;
  /// Hands the data over, waits for the script and returns the PNGs as run_figures does
  /// (`tradeoff`: as for run_figures). std::runtime_error (command line and exit status) when the
  /// script fails. Once only.
  std::vector<std::string> finish(const PrimaryResult& primary, const CampaignData& data,
                                  const nlohmann::json& tradeoff = nullptr);

 private:
  std::string out_dir_, cmd_;
  int pid_ = -1;
  int sock_ = -1;  // our end of the socket pair; the script's stdin is the other
};

}  // namespace analysis
