// `harness compare` (N campaigns' Table 4, mechanism medians, A/B metrics and differing settings
// side by side, or one beside the study's published values) and `harness archive` (DB, campaign YAML, plan, report and
// build info in one .tar.zst for artifact evaluation). Libraries: analysis/compare/compare_campaigns.hpp,
// harness/campaign/commands/archive.hpp.
#include "build_id.hpp"
#include "exit_codes.hpp"
#include "analysis_options.hpp"
#include "open_db.hpp"
#include "registry.hpp"

#include "analysis/report/analysis_report.hpp"
#include "analysis/data/campaign_settings.hpp"
#include "analysis/compare/compare.hpp"
#include "analysis/compare/compare_campaigns.hpp"
#include "analysis/compare/recorded_settings.hpp"
#include "analysis/compare/regression.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "analysis/compare/compare_published.hpp"
#include "harness/campaign/commands/archive.hpp"
#include "harness/text/join.hpp"
#include "harness/vm/subprocess.hpp"
#include "results/db.hpp"
#include "results/store/meta.hpp"
#include "results/provenance.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

namespace {

namespace fs = std::filesystem;

struct CompareArgs {
  std::vector<std::string> dbs;
  bool published = false;
  std::string format = "md", out;
  std::optional<int> replicates;      // unset: each campaign's analysis.bootstrap_replicates, else 10000
  std::optional<std::uint64_t> seed;  // unset: each campaign_meta.seed, else 1
};

struct ArchiveArgs {
  std::string db, out;
  bool figures = true;
};

std::map<std::string, std::string> campaign_meta(const std::string& db_path) {
  std::map<std::string, std::string> meta;
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  if (results::has_table(db, "campaign_meta")) meta = results::meta_map(db);
  return meta;
}

// Provenance of an artifact made from db_path; the kind from the stored YAML when an older
// DB lacks campaign_meta.kind.
results::Provenance provenance_of(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  auto p = results::collect_provenance(db, harness::cli::current_build(), harness::cli::command_line());
  if (p.campaign_kind.empty()) p.campaign_kind = analysis::campaign_kind(campaign_meta(db_path));
  return p;
}

// One campaign's analysis report with its preregistered settings (as `harness analyze`).
analysis::Report analyse(const std::string& db_path, const CompareArgs& a) {
  harness::cli::open_db(db_path, harness::cli::DbKind::Results);  // missing/not a DB: plain error, exit 2
  const auto data = analysis::load_campaign(db_path);
  std::vector<std::string> warnings;
  const auto opt = harness::cli::analysis_options(db_path, data.meta, a.replicates, a.seed, warnings);
  const auto ts = analysis::build_triplets(data);
  if (ts.triplets.empty())
    throw std::runtime_error(db_path + ": no complete matched " + ts.unit + " to compare (" + std::to_string(data.cases.size()) +
                             " completed case(s); a pilot DB has none: use `harness pilot-select`)");
  auto r = analysis::build_analysis_report(data, ts, analysis::run_primary(ts, opt));
  r.provenance = provenance_of(db_path);
  return r;
}

// One campaign as `harness compare` lines it up: an A/B campaign (design ab-pairs in its stored
// YAML) by its candidate / baseline metrics, any other by its analysis report; its recorded settings.
analysis::CompareCampaign read_campaign(const std::string& db_path, const CompareArgs& a, results::Provenance& prov) {
  harness::cli::open_db(db_path, harness::cli::DbKind::Results);  // missing/not a DB: plain error, exit 2
  analysis::CompareCampaign c;
  c.label = db_path;
  const auto meta = campaign_meta(db_path);
  if (analysis::read_campaign_settings(meta).design_kind == std::optional<std::string>("ab-pairs")) {
    results::Db db(db_path, results::Db::Mode::ReadOnly);
    auto campaign = harness::campaign::stored_campaign(db, db_path);
    if (a.replicates) campaign.bootstrap_replicates = *a.replicates;
    if (a.seed) campaign.seed = *a.seed;
    c.ab = analysis::compare_variants(db_path, db_path, campaign.regression_design());
    prov = provenance_of(db_path);
  } else {
    const auto report = analyse(db_path, a);
    c.side = analysis::side_from_report(report, db_path);
    prov = *report.provenance;
  }
  c.settings = analysis::recorded_settings(db_path);
  return c;
}

int run_compare(const CompareArgs& a) {
  if (a.published ? a.dbs.size() != 1 : a.dbs.size() < 2)
    throw CLI::ValidationError("DB", a.published ? "compare --published takes one DB"
                                                 : "compare takes two or more DBs: A.db B.db [C.db ...]");
  analysis::Report r;
  std::vector<results::Provenance> provs;
  if (a.published) {
    const auto ra = analyse(a.dbs[0], a);
    r = analysis::compare_with_study(ra, a.dbs[0]);
    provs.push_back(*ra.provenance);
  } else {
    std::vector<analysis::CompareCampaign> cs;
    provs.resize(a.dbs.size());
    for (std::size_t i = 0; i < a.dbs.size(); ++i) cs.push_back(read_campaign(a.dbs[i], a, provs[i]));
    r = analysis::compare_campaigns(cs);
  }
  // Provenance of the comparison: this build and command; campaign A's plan (the others' in the summary).
  r.provenance = provs.front();
  std::vector<std::string> synthetic;  // the sides made from a synthetic DB: the report says SYNTHETIC first
  for (std::size_t i = 0; i < provs.size(); ++i)
    if (provs[i].synthetic) synthetic.push_back(analysis::side_name(i) + " (" + a.dbs[i] + ")");
  if (!synthetic.empty()) {
    r.synthetic = true;
    if (provs.size() > 1)  // which of them: the banner above says that one is
      r.warnings.insert(r.warnings.begin(), "Synthetic DB(s), no case ran: " + harness::text::join(synthetic, ", ") + ".");
  }
  for (std::size_t i = 1; i < provs.size(); ++i)
    r.summary.push_back(analysis::side_name(i) + ": campaign " + provs[i].campaign_name + " (kind " +
                        (provs[i].campaign_kind.empty() ? std::string("unknown") : provs[i].campaign_kind) + "), plan SHA-256 " + provs[i].plan_sha256 + ".");
  if (!a.out.empty()) {
    analysis::write_report_files(r, a.out);
    std::fprintf(stderr, "harness compare: wrote %s/report.md, report.json, report.html and one CSV per table\n",
                 a.out.c_str());
  }
  if (a.format == "json") std::cout << analysis::render_json_text(r);
  else if (a.format == "csv") {
    if (analysis::is_synthetic(r)) std::cout << "# " << results::synthetic_banner() << "\n";
    for (const auto& t : r.tables) std::cout << "# " << t.id << "\n" << analysis::render_csv(t) << "\n";
  }
  else std::cout << analysis::render_markdown(r);
  return harness::cli::kOk;
}

int run_archive(const ArchiveArgs& a) {
  if (!fs::exists(a.db)) throw std::runtime_error("archive: database not found: " + a.db);
  harness::campaign::require_archive_name(a.out);
  const auto prov = provenance_of(a.db);
  // The report, made by this same executable's `analyze` (or `pilot-select` for a pilot DB).
  const fs::path report = fs::temp_directory_path() / ("harness-archive-report-" + std::to_string(::getpid()));
  fs::remove_all(report);
  std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<std::string> argv;
  if (prov.campaign_kind == "pilot") argv = {self, "pilot-select", a.db, "--format", "json", "--out", report.string()};
  else argv = {self, "analyze", a.db, "--format", "json", "--out", report.string()};
  if (!a.figures && argv[1] == "analyze") argv.push_back("--no-figures");
  std::fprintf(stderr, "harness archive: making the report: %s\n", harness::vm::render(argv).c_str());
  const auto res = harness::vm::run(argv);
  fs::create_directories(report);
  if (res.exit_code != 0 && res.exit_code != harness::cli::kFinding) {
    std::fprintf(stderr, "harness archive: warning: the report command exited %d; its message is in report/REPORT_FAILED.txt\n",
                 res.exit_code);
    std::ofstream(report / "REPORT_FAILED.txt") << harness::vm::render(argv) << "\nexit " << res.exit_code << "\n" << res.err;
  }
  // A dose from a pilot DB: that DB's Table 3 too (pilot-select of the pilot DB the plan names).
  const fs::path pilot_report = report.string() + "-pilot";
  fs::remove_all(pilot_report);
  if (const auto pilot = harness::campaign::pilot_dependency(a.db); pilot && fs::is_regular_file(pilot->path)) {
    const std::vector<std::string> pargv = {self, "pilot-select", pilot->path, "--format", "json", "--out",
                                            pilot_report.string()};
    std::fprintf(stderr, "harness archive: the plan's dose came from a pilot DB; its Table 3: %s\n",
                 harness::vm::render(pargv).c_str());
    const auto pres = harness::vm::run(pargv);
    if (pres.exit_code != 0 && pres.exit_code != harness::cli::kFinding) {
      fs::create_directories(pilot_report);
      std::ofstream(pilot_report / "REPORT_FAILED.txt") << harness::vm::render(pargv) << "\nexit " << pres.exit_code << "\n"
                                                        << pres.err;
    }
  }
  harness::campaign::ArchiveResult r;
  try {
    r = harness::campaign::write_archive(a.db, a.out, report.string(), prov,
                                         fs::is_directory(pilot_report) ? pilot_report.string() : "");
  } catch (...) {
    fs::remove_all(report);
    fs::remove_all(pilot_report);
    throw;
  }
  fs::remove_all(report);
  fs::remove_all(pilot_report);
  std::cout << "harness archive: wrote " << a.out << " (" << r.top << "/: " << r.files.size() << " files)\n";
  for (const auto& f : r.files) std::cout << "  " << r.top << "/" << f << "\n";
  for (const auto& n : r.notes) std::cout << "  note: " << n << "\n";
  return harness::cli::kOk;
}

const bool kReportRegistered = harness::cli::register_commands("report", [](CLI::App& app) {
  auto ca = std::make_shared<CompareArgs>();
  auto* cmp = app.add_subcommand(
      "compare",
      "Two or more campaigns side by side, the first the reference (harness compare A.db B.db [C.db ...]): "
      "Table 4, mechanism medians and arms of matched-block campaigns, candidate / baseline metrics of A/B "
      "campaigns, and every setting that differs (stored campaign YAML, arms, guest kernel, kernel command line, "
      "accelerator, harness commit); or one campaign beside the study's published results: whether each finding "
      "is reproduced, the all-four rule, the setting's differences, Tables 5 and 6, mechanism medians "
      "(harness compare --published DB)");
  cmp->add_option("DB", ca->dbs, "campaign databases: A.db B.db [C.db ...] (A is the reference), or one DB with --published")->required();
  cmp->add_flag("--published", ca->published,
                "compare with the study's published results: per comparison whether its finding is reproduced "
                "(its Table 4: 0.938 [0.906, 0.971], 0.704 [0.675, 0.735], 0.993 [0.968, 1.020], 0.765 [0.726, "
                "0.806]), whether the all-four rule gives its verdict, every difference from its setting, its "
                "statements on Tables 5 and 6 checked, and its mechanism medians; a campaign that is not assessable "
                "is said to be so");
  harness::cli::add_analysis_flags(*cmp, ca->replicates, ca->seed);
  cmp->add_option("--format", ca->format, "stdout format")->check(CLI::IsMember({"md", "csv", "json"}));
  cmp->add_option("--out", ca->out, "directory for report.md, report.json, report.html and one CSV per table");
  cmp->footer(harness::cli::kExitCodeTable);
  cmp->callback([ca] { harness::cli::exit_code() = run_compare(*ca); });

  auto aa = std::make_shared<ArchiveArgs>();
  auto* ar = app.add_subcommand(
      "archive",
      "Bundle a campaign for artifact evaluation: DB (consistent copy), campaign YAML, plan and its SHA-256, "
      "report (analyze, or pilot-select for a pilot DB), build info and a SHA-256 manifest, in one .tar.zst; a plan "
      "whose dose came from a pilot DB (from_pilot) also gets that pilot DB, its Table 3 and a check of its SHA-256 "
      "against the plan's (pilot/)");
  ar->add_option("DB", aa->db, "campaign database")->required();
  ar->add_option("OUT", aa->out, "archive to write, ending in .tar.zst")->required();
  ar->add_flag("!--no-figures", aa->figures, "report without the matplotlib figures");
  ar->footer(harness::cli::kExitCodeTable);
  ar->callback([aa] {
    harness::cli::open_db(aa->db, harness::cli::DbKind::Campaign);  // missing/not a campaign DB: plain error, exit 2
    harness::cli::exit_code() = run_archive(*aa);
  });
});

}  // namespace
