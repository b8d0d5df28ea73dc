// `harness case run --spec FILE --out DIR`: runs one case (harness/case/run/executor.hpp).
// `harness case check --spec FILE`: validates a spec only (nothing is touched).
// `harness case reclaim --cgroup DIR --bytes N`: one bounded-reclaim action
// (ReclaimAction::run, the code the executor runs) on an existing cgroup; prints the
// record as JSON (dose checks by hand and tests/vm/case/reclaim_vm_test).
// Exit codes: 0 completed (or valid), 2 refused spec (field named on stderr),
// 3 infra_failed (bundle written when possible; reason on stderr).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "harness/case/host/environment.hpp"
#include "harness/case/run/executor.hpp"
#include "harness/case/control/reclaim_action.hpp"
#include "harness/case/spec/spec.hpp"
#include "qualify/thresholds.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/validators.hpp"
#include "registry.hpp"

namespace {

struct CaseArgs {
  std::string spec, out, bin_dir, accelerator;
  bool skip_qualification = false;
  std::uint64_t min_free_disk_mib = qualify::kMinFreeDiskMiB;  // same as `harness qualify`
  int attempt = 1;
  double start_lead_s = 3.0;
};

/// Loads the spec or prints the refusal (exit 2). Returns false when refused.
bool load(const std::string& path, harness::case_::CaseSpec& out) {
  try {
    out = harness::case_::load_spec_file(path);
    return true;
  } catch (const harness::case_::SpecError& e) {
    std::fprintf(stderr, "harness case: spec refused: %s\n", e.what());
    nlohmann::json j{{"status", "refused"}, {"field", e.field()}, {"error", e.what()}};
    std::printf("%s\n", j.dump().c_str());
    harness::cli::exit_code() = harness::cli::kError;
    return false;
  }
}

const bool kCaseRegistered = harness::cli::register_commands("case", [](CLI::App& app) {
  auto* c = app.add_subcommand("case", "run one case of the study (cgroups, backend, controller, telemetry, restoration)");
  c->require_subcommand(1);
  auto args = std::make_shared<CaseArgs>();

  auto* run = c->add_subcommand("run", "run one case end to end and write DIR/<case_id>.db (exit 0 completed, 2 refused spec, 3 infra_failed)");
  run->add_option("--spec", args->spec, "case spec JSON (harness/case/SPEC.md); a missing file is a refused spec (2)")->required();
  run->add_option("--out", args->out, "output directory for the bundle and work files")->required();
  run->add_option("--bin-dir", args->bin_dir, "directory of pressure-gen, canary-compute, canary-sqlite (default: next to harness)");
  run->add_option("--accelerator", args->accelerator, "kvm|tcg|real (default: harness.accelerator= on /proc/cmdline, else detected in the guest from DMI and CPUID: kvm, tcg, real or the hypervisor's name)");
  run->add_option("--attempt", args->attempt, "attempt number recorded in the bundle")->check(harness::cli::integer_in(1));
  run->add_option("--min-free-disk-mib", args->min_free_disk_mib, "qualification: free space required on the out dir's filesystem, MiB")
      ->capture_default_str()->check(harness::cli::integer_in(0, 1ull << 30));
  run->add_option("--start-lead-s", args->start_lead_s, "seconds between starting the canaries and the schedule origin")
      ->capture_default_str()->check(CLI::Range(0.5, 60.0));
  run->add_flag("--skip-qualification", args->skip_qualification, "development only: do not run qualification (recorded in the bundle)");
  run->callback([args] {
    harness::case_::CaseSpec spec;
    if (!load(args->spec, spec)) return;
    harness::case_::ExecutorOptions o;
    o.out_dir = args->out;
    o.bin_dir = args->bin_dir;
    o.accelerator = args->accelerator;
    o.skip_qualification = args->skip_qualification;
    o.min_free_disk_bytes = args->min_free_disk_mib << 20;
    o.attempt = args->attempt;
    o.start_lead_ns = static_cast<std::int64_t>(args->start_lead_s * 1e9);
    auto r = harness::case_::run_case(spec, o);
    nlohmann::json j{{"case_id", spec.case_id}, {"status", r.status}, {"bundle", r.bundle_path}};
    j["error"] = r.error.empty() ? nlohmann::json() : nlohmann::json(r.error);
    std::printf("%s\n", j.dump().c_str());
    if (!r.error.empty()) std::fprintf(stderr, "harness case: %s: %s\n", r.status.c_str(), r.error.c_str());
    harness::cli::exit_code() = r.exit_code;
  });

  struct ReclaimArgs {
    std::string cgroup;
    std::int64_t bytes = 0;
    double settle_s = 2.2;
  };
  auto rargs = std::make_shared<ReclaimArgs>();
  auto* rec = c->add_subcommand("reclaim", "one memory.reclaim action on an existing cgroup; prints the record JSON "
                                           "(exit 0 whatever the errno; 2 when the cgroup is missing)");
  rec->add_option("--cgroup", rargs->cgroup, "cgroup directory, e.g. /sys/fs/cgroup/harness/bg")->required();
  rec->add_option("--bytes", rargs->bytes, "dose, bytes")->required()->check(harness::cli::integer_in(1));
  rec->add_option("--settle-s", rargs->settle_s, "delay before the settled pgsteal reading, s")->capture_default_str()
      ->check(CLI::Range(0.0, 60.0));
  rec->callback([rargs] {
    harness::kernel::Cgroup cg(harness::kernel::Fs("/"), rargs->cgroup);
    if (!cg.exists()) {
      std::fprintf(stderr, "harness case reclaim: no cgroup %s\n", rargs->cgroup.c_str());
      harness::cli::exit_code() = harness::cli::kError;  // could not run
      return;
    }
    auto r = harness::case_::ReclaimAction::run(cg, rargs->bytes, static_cast<std::int64_t>(rargs->settle_s * 1e9));
    std::printf("%s\n", r.to_json(harness::case_::page_size_bytes()).dump().c_str());
  });

  auto* check = c->add_subcommand("check", "validate a case spec without touching the host (exit 0 valid, 2 refused)");
  check->add_option("--spec", args->spec, "case spec JSON; a missing file is a refused spec (2)")->required();
  check->callback([args] {
    harness::case_::CaseSpec spec;
    if (!load(args->spec, spec)) return;
    std::printf("%s\n", nlohmann::json{{"status", "valid"}, {"case_id", spec.case_id}}.dump().c_str());
  });
});

}  // namespace
