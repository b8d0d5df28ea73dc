// The pybind11 module harness_analysis under Debian's /usr/bin/python3: it loads a campaign DB into
// numpy arrays equal to the C++ matrices, its bootstrap is bit-identical to the library's (and across
// thread counts), and the figures script writes the three PNGs through it.
#include "analysis/stats/bootstrap.hpp"
#include "analysis/data/case_columns.hpp"
#include "analysis/report/figures_runner.hpp"
#include "analysis/tables/primary.hpp"
#include "analysis/simulate/synthetic.hpp"

#include "golden_db.hpp"
#include "tests/common/small_synthetic.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

namespace {
const std::string kPyDir = HARNESS_BINARY_DIR "/analysis/python";
}

TEST(PythonModule, NumpyArraysAndBootstrapMatchTheLibrary) {
  const auto db = golden::temp_db("py");
  analysis::write_synthetic_campaign(db, test_support::small_synthetic());
  const std::string out = db + ".json";
  const std::string cmd = "PYTHONPATH=" + kPyDir + " /usr/bin/python3 " HARNESS_SOURCE_DIR
                          "/tests/unit/analysis/python_module_check.py " + db + " " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  const auto j = nlohmann::json::parse(ss.str());
  const auto data = analysis::load_campaign(db);
  const auto ts = analysis::build_triplets(data);
  const auto d = analysis::log_ratio_matrix(ts);
  const auto s = analysis::stratum_labels(ts);
  ASSERT_EQ(j["shape"][0].get<int>(), d.rows());
  EXPECT_EQ(j["strata"].get<std::vector<int>>(), s);
  for (int i = 0; i < d.rows(); ++i)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(j["log_ratios"][i][k].get<double>(), d(i, k));
  const auto b = analysis::stratified_bootstrap(d, s, {500, 9, 1});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(j["plain_row0"][k].get<double>(), b.plain(0, k));
  // numpy's pairwise sum and Eigen's reduction may round differently: relative 1e-12.
  EXPECT_NEAR(j["plain_sum"].get<double>() / b.plain.sum(), 1.0, 1e-12);
  EXPECT_TRUE(j["threads_identical"].get<bool>());
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 9, 2};
  const auto pr = analysis::run_primary(ts, opt);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(j["estimates"][k].get<double>(), pr.comparisons[k].estimate);
  EXPECT_DOUBLE_EQ(j["quantile7"].get<double>(), 9.91);
  EXPECT_TRUE(j["telemetry_column_same"].get<bool>());
  EXPECT_TRUE(j["telemetry_column_bad_column_refused"].get<bool>());
}

// The columns `harness analyze` hands to the figures script (case_columns_json) are the ones the
// module's load_campaign gives it, value for value; and the figures come out with them.
TEST(PythonModule, CasesJsonEqualsTheModulesColumns) {
  const auto db = golden::temp_db("cases-json");
  analysis::write_synthetic_campaign(db, test_support::small_synthetic());
  const auto data = analysis::load_campaign(db);
  const std::string file = db + ".cases.json";
  std::ofstream(file) << analysis::case_columns_json(analysis::case_columns(data)).dump();
  const std::string cmd = "PYTHONPATH=" + kPyDir + ":" HARNESS_SOURCE_DIR "/analysis/report /usr/bin/python3 " HARNESS_SOURCE_DIR
                          "/tests/unit/analysis/cases_json_check.py " + db + " " + file;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  // A case with no reclaim record has NaN there, and the JSON carries it (null, not 0).
  bool some_nan = false;
  for (double v : analysis::case_columns(data).reclaim_duration_ms) some_nan = some_nan || std::isnan(v);
  EXPECT_TRUE(some_nan);
  const auto dir = std::filesystem::path(db).parent_path() / "figs-cases-json";
  setenv("HARNESS_ANALYSIS_PYDIR", kPyDir.c_str(), 1);
  const auto pngs = analysis::run_figures(db, dir.string(), 2000, 1, "", nullptr, &data);
  unsetenv("HARNESS_ANALYSIS_PYDIR");
  EXPECT_EQ(pngs.size(), 5u);
  EXPECT_FALSE(std::filesystem::exists(dir / ".figures_cases.json"));  // removed afterwards
}

TEST(PythonModule, FiguresScriptWritesFivePngs) {
  const auto db = golden::temp_db("fig");
  analysis::write_synthetic_campaign(db, test_support::small_synthetic());
  const auto dir = std::filesystem::path(db).parent_path() / "figs";
  setenv("HARNESS_ANALYSIS_PYDIR", kPyDir.c_str(), 1);
  const auto pngs = analysis::run_figures(db, dir.string(), 2000, 1);
  ASSERT_EQ(pngs.size(), 5u);
  for (const auto& p : pngs) EXPECT_GT(std::filesystem::file_size(p), 10000u) << p;
  EXPECT_TRUE(std::filesystem::exists(dir / "forest.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "p99_by_regime.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "zram_timecourse.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "reclaim_execution.png"));
  setenv("HARNESS_ANALYSIS_PYDIR", "/nonexistent", 1);
  EXPECT_THROW(analysis::run_figures(db, dir.string(), 2000, 1), std::runtime_error);
  unsetenv("HARNESS_ANALYSIS_PYDIR");
}

// `harness analyze` starts the script before its data exist (FiguresProcess): handed the data, it
// draws the same five PNGs and the hand-off files are gone afterwards.
TEST(PythonModule, FiguresProcessStartedEarlyDrawsOnceHandedTheData) {
  const auto db = golden::temp_db("fig-early");
  analysis::write_synthetic_campaign(db, test_support::small_synthetic());
  const auto dir = std::filesystem::path(db).parent_path() / "figs-early";
  setenv("HARNESS_ANALYSIS_PYDIR", kPyDir.c_str(), 1);
  analysis::FiguresProcess fp(db, dir.string());
  unsetenv("HARNESS_ANALYSIS_PYDIR");
  const auto data = analysis::load_campaign(db);
  analysis::PrimaryOptions opt;
  opt.bootstrap = {2000, 1, 1};
  const auto pr = analysis::run_primary(analysis::build_triplets(data), opt);
  const auto pngs = fp.finish(pr, data);
  ASSERT_EQ(pngs.size(), 5u);
  EXPECT_EQ(std::filesystem::path(pngs[0]).filename(), "forest.png");
  EXPECT_EQ(std::filesystem::path(pngs[1]).filename(), "p99_by_regime.png");
  for (const auto& p : pngs) EXPECT_GT(std::filesystem::file_size(p), 10000u) << p;
  EXPECT_FALSE(std::filesystem::exists(dir / ".figures_primary.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / ".figures_cases.json"));
  EXPECT_THROW(fp.finish(pr, data), std::logic_error);
}

// Never handed the data (the command failed after the start): the script exits without drawing
// and is reaped (no child left); and a script that dies is an error of finish(), not a SIGPIPE.
TEST(PythonModule, FiguresProcessEndsWithoutDataAndReportsAFailedScript) {
  const auto db = golden::temp_db("fig-abandon");
  analysis::write_synthetic_campaign(db, test_support::small_synthetic());
  const auto dir = std::filesystem::path(db).parent_path() / "figs-abandon";
  setenv("HARNESS_ANALYSIS_PYDIR", kPyDir.c_str(), 1);
  { analysis::FiguresProcess fp(db, dir.string()); }
  int status = 0;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1);  // ECHILD: the destructor reaped it
  EXPECT_FALSE(std::filesystem::exists(dir));     // nothing drawn, no hand-off left
  setenv("HARNESS_PYTHON", "/bin/false", 1);
  {
    analysis::FiguresProcess fp(db, dir.string());
    const auto data = analysis::load_campaign(db);
    analysis::PrimaryOptions opt;
    opt.bootstrap = {2000, 1, 1};
    const auto pr = analysis::run_primary(analysis::build_triplets(data), opt);
    // Wait for the event itself: the script (this process's only child) has exited, so the
    // hand-off meets a closed socket. WNOWAIT leaves it unreaped for finish() to reap.
    siginfo_t info{};
    ASSERT_EQ(waitid(P_ALL, 0, &info, WEXITED | WNOWAIT), 0) << std::strerror(errno);
    EXPECT_EQ(info.si_code, CLD_EXITED);
    EXPECT_EQ(info.si_status, 1);  // /bin/false
    EXPECT_THROW(fp.finish(pr, data), std::runtime_error);
  }
  unsetenv("HARNESS_PYTHON");
  EXPECT_FALSE(std::filesystem::exists(dir / ".figures_cases.json"));
  setenv("HARNESS_ANALYSIS_PYDIR", "/nonexistent", 1);
  EXPECT_THROW(analysis::FiguresProcess(db, dir.string()), std::runtime_error);
  unsetenv("HARNESS_ANALYSIS_PYDIR");
}
