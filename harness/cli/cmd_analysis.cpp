// `harness analyze DB` (confirmatory report: Tables 1, 2, 4, 5, 6, mechanism, absolute differences,
// verdict, figures) and `harness pilot-select DB` (Table 3, chosen dose). Library: analysis/.
#include "build_id.hpp"
#include "registry.hpp"

#include "harness/cli/analysis_options.hpp"
#include "harness/cli/open_db.hpp"
#include "harness/cli/validators.hpp"

#include "analysis/report/analysis_report.hpp"
#include "analysis/data/campaign_settings.hpp"
#include "analysis/report/figures_runner.hpp"
#include "analysis/tables/pilot.hpp"

#include "results/db.hpp"
#include "results/store/meta.hpp"
#include "results/provenance.hpp"

#include <cstdio>
#include <map>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

namespace {

struct AnalyzeArgs {
  std::string db, format = "md", out;
  std::optional<int> replicates;       // unset: campaign YAML analysis.bootstrap_replicates, else 10000
  std::optional<std::uint64_t> seed;   // unset: campaign_meta.seed, else 1
  unsigned threads = 0;
  bool figures = true;
  std::string timeseries_case;  // "" = the first completed case of an arm that writes memory.reclaim
};

struct PilotArgs {
  std::string db, format = "md", out;
};

void print(const analysis::Report& r, const std::string& format) {
  if (format == "md") {
    std::cout << analysis::render_markdown(r);
  } else if (format == "json") {
    std::cout << analysis::render_json_text(r);
  } else {  // csv: every table, separated by a comment line naming it (a synthetic DB's first says so)
    if (analysis::is_synthetic(r)) std::cout << "# " << results::synthetic_banner() << "\n";
    for (const auto& t : r.tables) std::cout << "# " << t.id << "\n" << analysis::render_csv(t) << "\n";
  }
}

int run_analyze(const AnalyzeArgs& a) {
  {  // a missing, foreign or pilot DB: one plain sentence naming the file (exit 2)
    const auto db = harness::cli::open_db(a.db, harness::cli::DbKind::Results);
    const std::map<std::string, std::string> meta = results::meta_map(*db);
    if (const auto k = analysis::read_campaign_settings(meta).design_kind; k && *k == "pilot")
      throw std::runtime_error(a.db + " is a pilot DB (design.kind pilot): it has no matched triplets to analyse; "
                               "Table 3 and the chosen dose come from `harness pilot-select " + a.db + "`");
  }
  // The figures script starts now: its interpreter start and imports overlap the loading and the
  // bootstrap; it draws once handed the data (analysis/report/figures_runner.hpp, FiguresProcess). If the
  // command fails before that, its destructor ends the script without figures.
  std::unique_ptr<analysis::FiguresProcess> figures;
  std::string figures_error;
  if (!a.out.empty() && a.figures) {
    try {
      figures = std::make_unique<analysis::FiguresProcess>(a.db, a.out, a.timeseries_case);
    } catch (const std::exception& e) {
      figures_error = e.what();
    }
  }
  // Defaults from the preregistered campaign (campaign_meta): seed, analysis.bootstrap_replicates,
  // analysis.alpha; command-line flags override them.
  const auto data = analysis::load_campaign(a.db, a.threads);
  std::vector<std::string> warnings;
  analysis::PrimaryOptions opt = harness::cli::analysis_options(a.db, data.meta, a.replicates, a.seed, warnings);
  opt.bootstrap.threads = a.threads;
  const analysis::TripletSet ts = analysis::build_triplets(data);
  if (ts.triplets.empty()) {
    std::string why = a.db + ": no complete matched " + ts.unit + " to analyse (" + std::to_string(data.cases.size()) +
                      " completed case(s))";
    for (const auto& w : ts.warnings) why += "\n  " + w;
    throw std::runtime_error(why);
  }
  if (!a.timeseries_case.empty()) {  // a case the figure can draw: one of this DB's
    bool known = false;
    for (const auto& c : data.cases) known = known || c.case_id == a.timeseries_case;
    if (!known)
      throw std::runtime_error(a.db + ": --timeseries-case " + a.timeseries_case +
                               ": no such completed case (see `harness status` or the cases table)");
  }
  const analysis::PrimaryResult primary = analysis::run_primary(ts, opt);
  analysis::Report r = analysis::build_analysis_report(data, ts, primary);
  r.warnings.insert(r.warnings.end(), warnings.begin(), warnings.end());
  {
    results::Db db(a.db, results::Db::Mode::ReadOnly);
    r.provenance = results::collect_provenance(db, harness::cli::current_build(), harness::cli::command_line());
    if (r.provenance->campaign_kind.empty()) r.provenance->campaign_kind = analysis::campaign_kind(data.meta);
  }
  if (!a.out.empty()) {
    if (a.figures) {
      try {
        if (!figures) throw std::runtime_error(figures_error);
        auto pngs = figures->finish(primary, data, r.extra.value("tradeoff", nlohmann::json()));
        r.extra["figures"] = pngs;
        r.figures = pngs;
      } catch (const std::exception& e) {
        r.warnings.push_back(std::string("figures not produced: ") + e.what());
      }
    }
    analysis::write_report_files(r, a.out);
    std::fprintf(stderr,
                 "harness analyze: wrote %s/report.md, report.json, report.html (figures embedded) and one CSV per "
                 "table (each with a .meta.json provenance sidecar)\n",
                 a.out.c_str());
  }
  print(r, a.format);
  return 0;
}

int run_pilot(const PilotArgs& a) {
  // Thresholds and reading from the campaign YAML `eligibility:` section when present (defaults otherwise).
  std::map<std::string, std::string> meta;
  {
    const auto db = harness::cli::open_db(a.db, harness::cli::DbKind::Results);
    meta = results::meta_map(*db);
  }
  const auto settings = analysis::read_campaign_settings(meta);
  analysis::PilotRule rule;
  rule.max_duration_s = settings.max_duration_s.value_or(rule.max_duration_s);
  rule.min_achieved_ratio = settings.min_achieved_ratio.value_or(rule.min_achieved_ratio);
  rule.reading.restoration = settings.restoration.value_or(rule.reading.restoration);
  rule.reading.eagain = settings.eagain.value_or(rule.reading.eagain);
  auto res = analysis::select_dose(a.db, rule);
  res.warnings.insert(res.warnings.end(), settings.warnings.begin(), settings.warnings.end());
  auto rep = analysis::pilot_report(a.db, res);
  {
    results::Db db(a.db, results::Db::Mode::ReadOnly);
    rep.provenance = results::collect_provenance(db, harness::cli::current_build(), harness::cli::command_line());
    if (rep.provenance->campaign_kind.empty()) rep.provenance->campaign_kind = analysis::campaign_kind(meta);
  }
  if (!a.out.empty()) analysis::write_report_files(rep, a.out);
  print(rep, a.format);
  return res.chosen_bytes ? 0 : 1;
}

const bool kAnalysisRegistered = harness::cli::register_commands("analysis", [](CLI::App& app) {
  auto aa = std::make_shared<AnalyzeArgs>();
  auto* an = app.add_subcommand("analyze",
                                "Confirmatory analysis of a campaign DB: Tables 1, 2, 4, 5, 6, mechanism, absolute "
                                "p95/p99 differences, the verdict by the predefined rule (one per treatment when "
                                "the declared comparisons name several), what each arm's policy did and what each "
                                "arm bought (bg memory per phase, net DRAM freed, MiB) and cost (reclaim work, "
                                "reclaim CPU, ms; secondary), figures; with --out DIR "
                                "also report.md, report.json, report.html (one self-contained page, figures "
                                "embedded, for sharing), one CSV per table with a .meta.json provenance sidecar, and "
                                "the PNG figures");
  an->add_option("DB", aa->db, "campaign DB (results/schema.sql); a pilot DB is refused (use pilot-select)")->required();
  harness::cli::add_analysis_flags(*an, aa->replicates, aa->seed);
  an->add_option("--threads", aa->threads, "threads of the case loading and the bootstrap (0 = all cores, at most 4 for the loading; result "
                 "identical for any value)")
      ->check(harness::cli::integer_in(0, 4096));
  an->add_option("--format", aa->format, "stdout format")->check(CLI::IsMember({"md", "csv", "json"}));
  an->add_option("--out", aa->out,
                 "directory for report.md, report.json, report.html (self-contained, figures embedded), "
                 "<table>.csv with <table>.csv.meta.json, and the PNG figures (forest, tradeoff, p99_by_regime, "
                 "timeseries_<case>, zram_timecourse, reclaim_execution)");
  an->add_flag("!--no-figures", aa->figures, "skip the matplotlib figures");
  an->add_option("--timeseries-case", aa->timeseries_case,
                 "case id of the time-series figure timeseries_<case>.png (default: the first completed "
                 "case of an arm that writes memory.reclaim, bounded-reclaim in the study's design)");
  an->callback([aa] { harness::cli::exit_code() = run_analyze(*aa); });

  auto pa = std::make_shared<PilotArgs>();
  auto* ps = app.add_subcommand("pilot-select",
                                "Pilot dose selection: Table 3, each dose's eligibility and failed criteria, the "
                                "chosen (largest eligible) dose; exit 1 when no dose is eligible, exit 2 when the DB "
                                "is not a pilot DB");
  ps->add_option("DB", pa->db, "pilot campaign database")->required();
  ps->add_option("--format", pa->format, "stdout format")->check(CLI::IsMember({"md", "csv", "json"}));
  ps->add_option("--out", pa->out, "directory for report.md, report.json, table3_pilot.csv");
  ps->callback([pa] { harness::cli::exit_code() = run_pilot(*pa); });
});

}  // namespace
