// `harness plan | run | status | export | check`: campaigns and the runner (issue 6).
#include "harness/campaign/assertions.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/campaign_db.hpp"
#include "harness/campaign/export.hpp"
#include "harness/campaign/runner.hpp"
#include "harness/campaign/schedule.hpp"
#include "harness/campaign/status.hpp"
#include "harness/cli/registry.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace hc = harness::campaign;

namespace {

/// The campaign of a run: FILE when given, else the YAML stored in the DB at plan time.
hc::Campaign campaign_for(const std::string& file, const std::string& db_path) {
  if (!file.empty()) return hc::load_campaign(file);
  if (!std::filesystem::exists(db_path))
    throw std::runtime_error(db_path + ": no such campaign DB (give the campaign FILE to plan it)");
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT (SELECT value FROM campaign_meta WHERE key='campaign_yaml'), "
                      "(SELECT value FROM campaign_meta WHERE key='campaign_file')");
  q.step();
  if (q.is_null(0)) throw std::runtime_error(db_path + ": holds no plan (give the campaign FILE)");
  return hc::parse_campaign(q.text(0), q.opt_text(1).value_or(db_path) + " (as stored in " + db_path + ")");
}

void print_summary(const hc::RunSummary& s) {
  std::printf("run: %d planned, %d completed, %d left infra_failed, %d pending; %d attempt(s) in this run\n",
              s.planned, s.completed, s.infra_failed, s.pending, s.attempts_this_run);
}

}  // namespace

static const bool kRegistered = harness::cli::register_commands("campaign", [](CLI::App& app) {
  {
    auto* sub = app.add_subcommand("plan", "Plan a campaign: seeded schedule + its SHA-256 (the preregistration)");
    auto file = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    sub->add_option("FILE", *file, "campaign YAML (campaigns/*.yaml)")->required();
    sub->add_option("--db", *db, "campaign DB to store the plan in (created; refused if it holds another plan)");
    sub->add_option("--out", *out, "also write the schedule JSON here");
    sub->callback([=] {
      const auto c = hc::load_campaign(*file);
      const auto s = hc::plan(c);
      if (!out->empty()) {
        std::ofstream o(*out);
        o << s.json_text << "\n";
        if (!o) throw std::runtime_error(*out + ": cannot write");
      }
      if (!db->empty()) {
        results::Db d(*db, results::Db::Mode::Create);
        hc::store_plan(d, c, s);
      }
      std::printf("campaign %s: %zu cases on %zu VM(s), design %s\n", c.name.c_str(), s.cases.size(), c.vms.size(),
                  c.design.c_str());
      for (const auto& k : s.cases)
        std::printf("  %4d %-5s %s\n", k.ordinal, k.vm.c_str(), k.case_id.c_str());
      std::printf("schedule sha256 %s\n", s.sha256_hex.c_str());
    });
  }
  {
    auto* sub = app.add_subcommand("run", "Run (or resume) a campaign into its DB; only infra_failed cases are retried");
    auto file = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>();
    auto hosts = std::make_shared<std::string>();
    auto plain = std::make_shared<bool>(false);
    sub->add_option("FILE", *file, "campaign YAML (optional when the DB already holds the plan)");
    sub->add_option("--db", *db, "campaign DB (SQLite, WAL)")->required();
    sub->add_option("--hosts", *hosts, "hosts file of running agents (harness/vm/HOSTS.md); default: the campaign's provider");
    sub->add_flag("--plain", *plain, "plain progress lines even on a terminal");
    auto accel = std::make_shared<std::string>();
    sub->add_option("--accel", *accel, "accelerator for local guests: auto (trial-boot KVM, else TCG), kvm (fail if it cannot run a guest) or tcg; default $HARNESS_ACCEL, else the campaign's provider.accelerator, else auto")->check(CLI::IsMember({"auto", "kvm", "tcg"}));
    sub->callback([=] {
      const auto c = campaign_for(*file, *db);
      hc::RunOptions o;
      o.db_path = *db;
      o.hosts_file = *hosts;
      o.accelerator = *accel;
      if (*plain) o.progress_tty = 0;
      const auto s = hc::run_campaign(c, o);
      print_summary(s);
      harness::cli::exit_code() = (s.completed == s.planned) ? 0 : 1;
    });
  }
  {
    auto* sub = app.add_subcommand("status", "What is done, failed and pending in a campaign DB");
    auto db = std::make_shared<std::string>();
    sub->add_option("DB", *db, "campaign DB")->required()->check(CLI::ExistingFile);
    sub->callback([=] {
      results::Db d(*db, results::Db::Mode::ReadOnly);
      std::fputs(hc::status_report(d).c_str(), stdout);
    });
  }
  {
    auto* sub = app.add_subcommand("export", "Export a campaign DB as tidy tables");
    auto db = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("csv");
    auto out = std::make_shared<std::string>();
    sub->add_option("DB", *db, "campaign DB")->required()->check(CLI::ExistingFile);
    sub->add_option("--format", *format, "csv")->check(CLI::IsMember({"csv"}));
    sub->add_option("--out", *out, "output folder (default: DB name without extension + '-csv')");
    sub->callback([=] {
      std::string dir = *out;
      if (dir.empty()) dir = (std::filesystem::path(*db).parent_path() / std::filesystem::path(*db).stem()).string() + "-csv";
      results::Db d(*db, results::Db::Mode::ReadOnly);
      for (const auto& f : hc::export_csv(d, dir)) std::printf("%s\n", f.c_str());
    });
  }
  {
    auto* sub = app.add_subcommand("check", "Run a CI campaign and evaluate its assertions (JUnit XML; exit 1 on failure)");
    auto file = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>();
    auto hosts = std::make_shared<std::string>();
    auto junit = std::make_shared<std::string>();
    auto plain = std::make_shared<bool>(false);
    sub->add_option("FILE", *file, "campaign YAML with `assertions:`")->required();
    sub->add_option("--db", *db, "campaign DB (default: ./<campaign>.db)");
    sub->add_option("--hosts", *hosts, "hosts file of running agents; default: the campaign's provider");
    sub->add_option("--junit", *junit, "write JUnit XML here");
    sub->add_flag("--plain", *plain, "plain progress lines even on a terminal");
    auto accel = std::make_shared<std::string>();
    sub->add_option("--accel", *accel, "accelerator for local guests: auto (trial-boot KVM, else TCG), kvm (fail if it cannot run a guest) or tcg; default $HARNESS_ACCEL, else the campaign's provider.accelerator, else auto")->check(CLI::IsMember({"auto", "kvm", "tcg"}));
    sub->callback([=] {
      const auto c = hc::load_campaign(*file);
      if (c.assertions.empty()) throw std::runtime_error(*file + ": field assertions: none given; nothing to check");
      hc::RunOptions o;
      o.db_path = db->empty() ? c.name + ".db" : *db;
      o.hosts_file = *hosts;
      o.accelerator = *accel;
      if (*plain) o.progress_tty = 0;
      print_summary(hc::run_campaign(c, o));
      results::Db d(o.db_path, results::Db::Mode::ReadOnly);
      const auto res = hc::evaluate_assertions(d, c);
      int failed = 0;
      for (const auto& r : res) {
        std::printf("%s  %s  (%d case(s))\n", r.passed ? "PASS" : "FAIL", r.name.c_str(), r.cases_checked);
        for (const auto& f : r.failures) std::printf("      %s\n", f.c_str());
        failed += r.passed ? 0 : 1;
      }
      if (!junit->empty()) hc::write_junit(*junit, c.name, res);
      std::printf("%d of %zu assertion(s) failed\n", failed, res.size());
      harness::cli::exit_code() = failed ? 1 : 0;
    });
  }
});
