// Figure script runner (see figures_runner.hpp).
#include "analysis/report/figures_runner.hpp"
#include "analysis/data/case_columns.hpp"
#include "harness/kernel/spawn.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

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
/// What the forest plot draws, in the keys of harness_analysis.primary() (analysis/report/python/module.cpp).
nlohmann::json primary_for_figures(const PrimaryResult& pr, const nlohmann::json& tradeoff) {
  nlohmann::json by_treatment = nlohmann::json::array();
  for (const auto& [t, v] : pr.by_treatment)
    by_treatment.push_back({{"treatment", t}, {"general_benefit", v.general_benefit}, {"harm", v.harm}});
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
          {"arms", pr.arms},
          {"study_family", pr.study_family},
          {"unit", pr.unit},
          {"level", pr.level},
          {"assessable", pr.verdict.assessable},
          {"per_treatment", pr.per_treatment},
          {"general_benefit", pr.verdict.general_benefit},
          {"harm", pr.verdict.harm},
          {"by_treatment", by_treatment},
          {"tradeoff", tradeoff}};
}
struct Script {
  std::string py, pydir, script;
};
/// The interpreter, module dir and script, checked (std::runtime_error naming what is missing).
Script locate_script() {
  Script s{env_or("HARNESS_PYTHON", "/usr/bin/python3"), env_or("HARNESS_ANALYSIS_PYDIR", HK_ANALYSIS_PYDIR),
           env_or("HARNESS_FIGURES_SCRIPT", HK_ANALYSIS_SRCDIR "/report/figures.py")};
  if (!std::filesystem::exists(s.script)) throw std::runtime_error("figures: script not found: " + s.script);
  bool module_found = false;
  if (std::filesystem::is_directory(s.pydir))
    for (const auto& e : std::filesystem::directory_iterator(s.pydir))
      if (e.path().filename().string().rfind("harness_analysis", 0) == 0) module_found = true;
  if (!module_found)
    throw std::runtime_error("figures: pybind11 module harness_analysis not found in " + s.pydir +
                             " (build target harness_analysis, or set HARNESS_ANALYSIS_PYDIR)");
  return s;
}
std::string primary_path(const std::string& out_dir) {
  return (std::filesystem::path(out_dir) / ".figures_primary.json").string();
}
std::string cases_path(const std::string& out_dir) {
  return (std::filesystem::path(out_dir) / ".figures_cases.json").string();
}
void write_json(const std::string& file, const nlohmann::json& j) {
  std::ofstream f(file);
  f << j.dump();
  if (!f) throw std::runtime_error("figures: cannot write " + file);
}
/// The PNGs in out_dir in report order: the primary result first, then p99 by regime, then by name.
std::vector<std::string> list_pngs(const std::string& out_dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(out_dir))
    if (e.path().extension() == ".png") out.push_back(e.path().string());
  auto rank = [](const std::string& p) {
    const auto f = std::filesystem::path(p).filename().string();
    return f == "forest.png" ? 0 : f == "tradeoff.png" ? 1 : f == "p99_by_regime.png" ? 2 : 3;
  };
  std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  return out;
}
std::string failed_message(const std::string& cmd, int status) {
  return fmt::format("figures: `{}` failed (status {})", cmd,
                     WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : status);
}
int wait_child(int pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}
}  // namespace

std::vector<std::string> run_figures(const std::string& db_path, const std::string& out_dir, int replicates,
                                     unsigned long long seed, const std::string& timeseries_case,
                                     const PrimaryResult* primary, const CampaignData* data,
                                     const nlohmann::json& tradeoff) {
  const Script sc = locate_script();
  std::string cmd = fmt::format("PYTHONPATH={} MPLBACKEND=Agg {} {} --db {} --out {} --replicates {} --seed {}",
                                quote(sc.pydir), quote(sc.py), quote(sc.script), quote(db_path), quote(out_dir),
                                replicates, seed);
  std::filesystem::create_directories(out_dir);  // the hand-off files go there before the script runs
  const std::string primary_file = primary_path(out_dir);
  if (primary) {
    write_json(primary_file, primary_for_figures(*primary, tradeoff));
    cmd += " --primary-json " + quote(primary_file);
  }
  const std::string cases_file = cases_path(out_dir);
  if (data) {
    write_json(cases_file, case_columns_json(case_columns(*data)));
    cmd += " --cases-json " + quote(cases_file);
  }
  if (!timeseries_case.empty()) cmd += " --case " + quote(timeseries_case);
  const int rc = std::system(cmd.c_str());
  if (primary) std::filesystem::remove(primary_file);
  if (data) std::filesystem::remove(cases_file);
  if (rc != 0) throw std::runtime_error(failed_message(cmd, rc));
  return list_pngs(out_dir);
}

FiguresProcess::FiguresProcess(const std::string& db_path, const std::string& out_dir,
                               const std::string& timeseries_case)
    : out_dir_(out_dir) {
  const Script sc = locate_script();
  std::vector<std::string> args = {sc.py, sc.script, "--db", db_path, "--out", out_dir, "--handoff-stdin"};
  if (!timeseries_case.empty()) args.insert(args.end(), {"--case", timeseries_case});
  cmd_ = fmt::format("PYTHONPATH={} MPLBACKEND=Agg", quote(sc.pydir));
  for (const auto& a : args) cmd_ += " " + quote(a);
  // The environment: the caller's, with PYTHONPATH and MPLBACKEND set (as run_figures' command line).
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "PYTHONPATH=", 11) != 0 && std::strncmp(*e, "MPLBACKEND=", 11) != 0) env.emplace_back(*e);
  env.push_back("PYTHONPATH=" + sc.pydir);
  env.push_back("MPLBACKEND=Agg");
  // A socket pair, not a pipe: send(MSG_NOSIGNAL) to a script that has died is an error, not SIGPIPE.
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw std::runtime_error(std::string("figures: socketpair: ") + std::strerror(errno));
  harness::kernel::SpawnSpec spec;
  spec.argv = args;
  spec.search_path = false;
  spec.env = env;
  spec.stdin_to = harness::kernel::ChildStream::to_fd(sv[1]);
  const harness::kernel::Spawned started = harness::kernel::spawn(spec);
  ::close(sv[1]);
  if (!started.ok()) {
    ::close(sv[0]);
    throw std::runtime_error(fmt::format("figures: `{}`: {}", cmd_, started.message()));
  }
  pid_ = started.pid;
  sock_ = sv[0];
}

FiguresProcess::~FiguresProcess() {
  if (sock_ >= 0) ::close(sock_);  // end of file: the script exits without drawing
  if (pid_ > 0) wait_child(pid_);
}

std::vector<std::string> FiguresProcess::finish(const PrimaryResult& primary, const CampaignData& data,
                                                const nlohmann::json& tradeoff) {
  if (pid_ <= 0) throw std::logic_error("figures: finish() called twice");
  const std::string primary_file = primary_path(out_dir_), cases_file = cases_path(out_dir_);
  std::string error;
  try {
    std::filesystem::create_directories(out_dir_);  // the script's out dir, and the hand-off files' place
    write_json(primary_file, primary_for_figures(primary, tradeoff));
    write_json(cases_file, case_columns_json(case_columns(data)));
    const std::string line =
        nlohmann::json{{"primary_json", primary_file}, {"cases_json", cases_file}}.dump() + "\n";
    std::size_t sent = 0;
    while (sent < line.size()) {
      const ssize_t n = ::send(sock_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the script is gone: its exit status tells why
      sent += static_cast<std::size_t>(n);
    }
  } catch (const std::exception& e) {
    error = e.what();  // files not written: the script gets end of file and exits
  }
  ::close(sock_);
  sock_ = -1;
  const int status = wait_child(pid_);
  pid_ = -1;
  std::filesystem::remove(primary_file);
  std::filesystem::remove(cases_file);
  if (!error.empty()) throw std::runtime_error(error);
  if (status != 0) throw std::runtime_error(failed_message(cmd_, status));
  return list_pngs(out_dir_);
}

}  // namespace analysis
