// Preconditions and qualification of a case (preconditions.hpp).
#include "harness/case/host/preconditions.hpp"
#include "harness/case/spec/qualification_options.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "harness/case/host/backend.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/text/join.hpp"

namespace harness::case_ {

Checked check_workload_inputs(const std::string& bin_dir, const CaseSpec& spec) {
  for (const char* bin : {"pressure-gen", "canary-compute", "canary-sqlite"}) {
    const auto p = std::filesystem::path(bin_dir) / bin;
    if (::access(p.c_str(), X_OK) != 0)
      return problem(fmt::format("workload binary {} not executable: {}", p.string(), std::strerror(errno)));
  }
  if (::access(spec.canaries.sqlite_db_path.c_str(), R_OK) != 0)
    return problem(fmt::format("canaries.sqlite_db_path {}: {} (build it with `canary-sqlite prepare`)",
                               spec.canaries.sqlite_db_path, std::strerror(errno)));
  return {};
}

Checked protect_from_oom_killer(const harness::kernel::Fs& fs) {
  auto adj = harness::kernel::write_oom_score_adj(fs, -1000);
  if (!adj.ok()) return problem("cannot set own oom_score_adj to -1000: " + adj.message());
  return {};
}

Checked clean_leftovers(const harness::kernel::Fs& fs, const CaseCgroups& cgroups, const BackendSpec& backend,
                        std::vector<StepRecord>& steps) {
  if (cgroups.parent().exists()) {
    steps.push_back(cgroups.kill_all(10'000'000'000));
    cgroups.remove(steps);
  }
  const auto leftovers = Backend::cleanup_leftovers(fs, backend, steps);
  if (!leftovers.released) return problem(leftovers.cause);
  if (!cgroups.present().empty())
    return problem(fmt::format("leftover cgroup {} could not be removed", cgroups.present().front()));
  return {};
}

Qualification qualify_host(const CaseSpec& spec, const ExecutorOptions& opt) {
  Qualification out;
  if (opt.skip_qualification) {
    out.skipped = true;
    out.report = {{"skipped", true}, {"note", "--skip-qualification (development only)"}};
    return out;
  }
  const auto rep = qualify::run(case_qualification_options(spec, opt.root, opt.out_dir, opt.min_free_disk_bytes));
  out.report = rep.to_json();
  if (!rep.passed) {
    out.failure = "host not qualified: " + text::join(rep.reasons(), "; ");
  }
  return out;
}

}  // namespace harness::case_
