// The policy of `harness check` (see check_judge.hpp).
#include "harness/campaign/check/check_judge.hpp"

#include "analysis/compare/regression.hpp"
#include "harness/campaign/model/ab_settings.hpp"
#include "harness/campaign/check/assertions.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/meta.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <stdexcept>
#include <vector>

namespace harness::campaign {
namespace {

/// campaign_meta campaign_yaml and campaign_file of a campaign DB (nullopt when absent).
struct StoredPlan {
  std::optional<std::string> yaml, file;
};

StoredPlan stored_plan(results::Db& db) {
  return {results::meta_value(db, "campaign_yaml"), results::meta_value(db, "campaign_file")};
}

/// --baseline-db: the comparison settings of `c` as written against the stored campaign's.
DbRefusal settings_refusal(results::Db& base, const std::string& base_path, const Campaign& c) {
  const auto stored = stored_plan(base);
  if (!stored.yaml) throw std::runtime_error(base_path + ": holds no campaign plan (campaign_meta campaign_yaml)");
  // Both sides as written (parse_campaign, no pin resolution): `pinned_commit: build` compares as written.
  const auto ours = comparison_settings(parse_campaign(c.yaml_text, c.file));
  const auto theirs = comparison_settings(parse_campaign(*stored.yaml, base_path + " (campaign_yaml)"));
  const auto diff = differing_settings(ours, theirs);
  if (diff.empty()) return {};
  std::string msg = "harness check: --baseline-db " + base_path + " was run with other comparison settings (digest " +
                    settings_digest(theirs) + ", this campaign " + settings_digest(ours) +
                    "); refusing to compare. Differing settings (this campaign vs the baseline's):\n";
  for (const auto& d : diff) msg += "  " + d.path + ": " + d.ours + " vs " + d.theirs + "\n";
  return {DbRefusalReason::other_settings, msg};
}

/// Completed baseline cases (spec_json variant.name) in a campaign DB.
std::int64_t completed_baseline_cases(results::Db& db) {
  return results::count_variant_cases(db, kCompletedStatus, "baseline");
}

/// "v1, v2" of a set.
std::string joined(const std::set<std::string>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + v;
  return s;
}

/// name -> what it sets (variant_lines() without the "name: " prefix).
std::map<std::string, std::string> variant_settings(const Campaign& c) {
  std::map<std::string, std::string> out;
  const auto lines = variant_lines(c);
  for (std::size_t i = 0; i < c.variants.size() && i < lines.size(); ++i)
    out[c.variants[i].name] = lines[i].substr(c.variants[i].name.size() + 2);
  return out;
}

/// Every design difference between FILE's campaign (`ours`) and a DB's stored one, one line
/// each, FILE's value first: design.kind, each variant, the comparison settings digest and
/// the settings behind it (those two already named left out).
std::vector<std::string> design_differences(const Campaign& ours, const Campaign& theirs) {
  std::vector<std::string> out;
  if (ours.design != theirs.design) out.push_back("design.kind: " + ours.design + " vs " + theirs.design);
  auto a = variant_settings(ours), b = variant_settings(theirs);
  for (const auto& [name, line] : a)
    if (!b.count(name) || b[name] != line)
      out.push_back("variants." + name + ": " + line + " vs " + (b.count(name) ? b[name] : "(absent)"));
  for (const auto& [name, line] : b)
    if (!a.count(name)) out.push_back("variants." + name + ": (absent) vs " + line);
  const auto sa = comparison_settings(ours), sb = comparison_settings(theirs);
  if (settings_digest(sa) != settings_digest(sb)) {
    out.push_back("comparison settings sha256: " + settings_digest(sa) + " vs " + settings_digest(sb));
    for (const auto& d : differing_settings(sa, sb))
      if (d.path != "design.kind" && d.path.rfind("variants.", 0) != 0)
        out.push_back("  " + d.path + ": " + d.ours + " vs " + d.theirs);
  }
  return out;
}

/// --judge: the stored plan's design against FILE's.
DbRefusal design_refusal(results::Db& db, const std::string& db_path, const Campaign& c) {
  const std::string head = "harness check: --judge " + db_path + ": ";
  const auto stored = stored_plan(db);
  std::optional<Campaign> theirs;
  std::string why = "holds no campaign plan (campaign_meta campaign_yaml)";
  if (stored.yaml) {
    try {
      theirs = parse_campaign(*stored.yaml, stored.file.value_or(db_path + " (campaign_yaml)"));
    } catch (const std::exception& e) {
      why = std::string("its stored campaign YAML does not parse: ") + e.what();
    }
  }
  if (!theirs)
    return {DbRefusalReason::no_plan, head + why + "; cannot tell whether it ran " + c.file + "'s design\n"};
  const auto diffs = design_differences(parse_campaign(c.yaml_text, c.file), *theirs);
  if (diffs.empty()) return {};
  std::string msg = head + "its plan is of another design than " + c.file + " (" + c.file +
                    "'s value first, then the DB's plan's); judge a DB with the campaign file that ran it:\n";
  for (const auto& d : diffs) msg += "  " + d + "\n";
  return {DbRefusalReason::other_design, msg};
}

/// The A/B environment comparison as a JUnit testcase (classname <campaign>.environment):
/// both sides' values per field as properties, the table in <system-out>, an <error> when
/// the comparison was refused.
JUnitExtraCase environment_testcase(const EnvironmentComparison& e, const std::string& warning,
                                    const std::string& refusal) {
  JUnitExtraCase x;
  x.classname_suffix = "environment";
  x.name = "baseline and candidate environment";
  auto key = [](const std::string& f) {
    std::string k;
    for (char ch : f) k += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    return k;
  };
  x.properties.emplace_back("baseline.db", e.baseline.db);
  x.properties.emplace_back("baseline.cases", std::to_string(e.baseline.cases));
  x.properties.emplace_back("candidate.db", e.candidate.db);
  x.properties.emplace_back("candidate.cases", std::to_string(e.candidate.cases));
  for (const auto& f : e.fields) {
    x.properties.emplace_back("baseline." + key(f.field), f.baseline);
    x.properties.emplace_back("candidate." + key(f.field), f.candidate);
  }
  if (!warning.empty()) x.properties.emplace_back("warning", warning);
  x.system_out = environment_text(e) + (warning.empty() ? "" : "WARNING: " + warning + "\n");
  x.error = refusal;
  return x;
}

/// A/B: both sides' environments (refusal on drift not allowed), then the metric comparison.
/// Fills j's outcome, environment and error; `extra` gets the environment testcase.
void compare_sides(const Campaign& c, const JudgeRequest& in, results::Db& db, results::Db& base, Judgement& j,
                   std::vector<JUnitExtraCase>& extra) {
  const std::string base_path = in.baseline_db.empty() ? in.db : in.baseline_db;
  auto env = compare_environments(read_variant_environment(base, "baseline", base_path),
                                  read_variant_environment(db, "candidate", in.db), c);
  const std::string same = same_environment_warning(env, c);
  if (!same.empty()) j.outcome.warnings.push_back(same);
  j.outcome.environment_markdown = environment_markdown(env);
  const auto drift = env.unrequested();
  const auto kept = in.baseline_db.empty() || in.allow_drift ? Checked() : check_environment_drift(env, in.baseline_db);
  if (!kept) {
    j.outcome.refusal = kept.error().message;
    extra.push_back(environment_testcase(env, same, j.outcome.refusal));
    j.environment = std::move(env);
    return;
  }
  for (const auto& f : drift)
    j.outcome.warnings.push_back((in.baseline_db.empty() ? "the baseline and candidate cases of this run differ in "
                                                         : "environment drift allowed (--allow-env-drift): ") +
                                 f.field + ": " + f.baseline + " vs " + f.candidate);
  extra.push_back(environment_testcase(env, same, ""));
  j.environment = std::move(env);
  try {
    j.outcome.metrics = analysis::compare_variants(base_path, in.db, c.regression_design(), in.rule);
  } catch (const std::exception& e) {
    j.error = e.what();
    return;
  }
  j.outcome.baseline_db = in.baseline_db;
  j.outcome.settings_sha256 = comparison_settings_sha256(c);
  j.outcome.variants = variant_lines(c);
  j.outcome.bootstrap_replicates = c.bootstrap_replicates;
  j.outcome.seed = c.seed;
  j.outcome.regression_alpha = c.regression_alpha;
  j.outcome.rule = in.rule;
}

/// The cases whose kernels the KCIDB file names: every case of `db`, and of a separate
/// `baseline` DB its baseline cases.
std::vector<CaseKernel> judged_kernels(results::Db& db, results::Db* baseline) {
  auto cases = case_kernels(db);
  if (baseline && baseline != &db)
    for (auto& k : case_kernels(*baseline))
      if (k.variant == "baseline") cases.push_back(std::move(k));
  return cases;
}

/// JUnit (when asked), Markdown (when asked; A/B and refused: by default next to the DB) and
/// KCIDB (when asked).
void write_outputs(const Campaign& c, const JudgeRequest& in, const results::Provenance& prov, Judgement& j,
                   const std::vector<JUnitExtraCase>& extra, results::Db& db, results::Db* baseline) {
  const bool refused = !j.outcome.refusal.empty();
  if (!in.junit.empty()) {
    write_junit(in.junit, c.name, j.outcome.assertions, &prov, j.ab && !refused ? &j.outcome.metrics : nullptr,
                j.ab ? &extra : nullptr);
    j.junit_path = in.junit;
  }
  const std::string md = !in.markdown.empty() ? in.markdown : j.ab ? default_markdown_path(in.db) : "";
  if (!md.empty()) {
    write_check_markdown(md, j.outcome, &prov);
    j.markdown_path = md;
  }
  if (in.kcidb.path.empty()) return;
  write_kcidb({&c, &j, &prov, judged_kernels(db, baseline), j.junit_path, j.markdown_path}, in.kcidb);
  j.kcidb_path = in.kcidb.path;
}

/// The assertion lines of the printout (ours, issue 59): per assertion one summary line
/// (assertion_summary: result, name, cases, failures, the range of each measured quantity), then
/// its first kShownFailures failure lines and how many more; every case's value is in the
/// Markdown summary and the JUnit file, which the closing line names (`where`).
std::string assertion_lines(const std::vector<AssertionResult>& assertions, const std::string& where) {
  constexpr std::size_t kShownFailures = 3;
  std::string s;
  std::size_t measured = 0;
  for (const auto& r : assertions) {
    measured += r.measured.size();
    s += assertion_summary(r) + "\n";
    for (std::size_t i = 0; i < r.failures.size() && i < kShownFailures; ++i) s += "      " + r.failures[i] + "\n";
    if (r.failures.size() > kShownFailures)
      s += fmt::format("      ... and {} more failure(s)\n", r.failures.size() - kShownFailures);
  }
  if (measured > 0) s += fmt::format("every case's measured value ({} in all): {}\n", measured, where);
  return s;
}

/// The metric table and a line per regression, inconclusive metric or toleranced metric without data.
std::string metric_lines(const CheckOutcome& o) {
  std::string s = "\ncandidate / baseline (" + (o.baseline_db.empty() ? std::string("same DB") : o.baseline_db) +
                  "):\n" + regression_table(o.metrics);
  for (const auto& m : o.metrics) {
    const char* tag = m.verdict == "regression"                              ? "REGRESSION"
                      : m.verdict == "inconclusive"                          ? "INCONCLUSIVE"
                      : m.verdict == "no data" && (m.max_ratio || m.min_ratio) ? "NO DATA"
                                                                               : nullptr;
    if (tag) s += fmt::format("  {} {}: {}\n", tag, m.metric, m.detail);
  }
  return s;
}

}  // namespace

DbRefusal baseline_db_refusal(results::Db& base, const std::string& base_path, const Campaign& c,
                              const std::optional<std::string>& harness_commit) {
  if (auto r = settings_refusal(base, base_path, c); r.refused()) return r;
  if (completed_baseline_cases(base) == 0)
    return {DbRefusalReason::no_baseline_case,
            "harness check: --baseline-db " + base_path + " holds no completed baseline case\n"};
  if (!harness_commit) return {};
  const auto theirs = recorded_commits(base, "baseline");
  if (theirs == std::set<std::string>{*harness_commit}) return {};
  return {DbRefusalReason::other_commit,
          "harness check: --baseline-db " + base_path + ": its baseline cases ran harness commit " + joined(theirs) +
              ", this harness is " + *harness_commit +
              "; refusing to compare (nothing was run). Run the baseline again with this build (docs/CI.md "
              "\"Storing and refreshing the baseline DB\"), or give --allow-env-drift\n"};
}

DbRefusal judged_db_refusal(results::Db& db, const std::string& db_path, const Campaign& c) {
  const std::string head = "harness check: --judge " + db_path + ": ";
  const auto completed = results::case_campaigns_with_status(db, kCompletedStatus);
  if (completed.count == 0) return {DbRefusalReason::no_case, head + "holds no completed case to judge\n"};
  const std::string names = completed.names.value_or("");
  if (completed.campaigns != 1 || names != c.name)
    return {DbRefusalReason::other_campaign, head + "its cases are of campaign " + names + ", not of " + c.file +
                                                 " (name " + c.name +
                                                 "); judge a DB with the campaign file that ran it\n"};
  return design_refusal(db, db_path, c);
}

std::set<std::string> baseline_case_ids(const Campaign& c) {
  std::set<std::string> out;
  for (const auto& k : plan(c).cases)
    if (k.spec.is_object() && k.spec.contains("variant") && k.spec["variant"].value("name", "") == "baseline")
      out.insert(k.case_id);
  return out;
}

Judgement judge(const Campaign& c, const JudgeRequest& in, results::Db& db, results::Db* baseline,
                const results::Provenance& prov) {
  Judgement j;
  j.ab = c.design == "ab-pairs";
  j.outcome.campaign = c.name;
  j.outcome.db_path = in.db;
  j.outcome.assertions = evaluate_assertions(db, c, in.skip_cases);
  std::vector<JUnitExtraCase> extra;
  if (j.ab) compare_sides(c, in, db, baseline ? *baseline : db, j, extra);
  if (j.error.empty()) write_outputs(c, in, prov, j, extra, db, baseline);  // the variants not compared: nothing written
  j.verdict = verdict_of(j.outcome, j.error);
  return j;
}

JudgementText render_judgement(const Judgement& j) {
  JudgementText t;
  std::vector<std::string> files;
  if (!j.markdown_path.empty()) files.push_back("the Markdown summary " + j.markdown_path);
  if (!j.junit_path.empty()) files.push_back("the JUnit file " + j.junit_path);
  const std::string where = files.empty() ? "written nowhere: give --markdown FILE or --junit FILE"
                                          : "in " + text::join(files, " and ");
  t.out = assertion_lines(j.outcome.assertions, where);
  if (j.environment) {
    t.out += "\nenvironment (what the cases recorded):\n" + environment_text(*j.environment);
    for (const auto& w : j.outcome.warnings) t.out += "WARNING: " + w + "\n";
  }
  if (!j.error.empty()) {
    t.err = "harness check: cannot compare the variants: " + j.error + "\n";
    return t;
  }
  if (j.ab && j.outcome.refusal.empty()) t.out += metric_lines(j.outcome);
  if (!j.markdown_path.empty()) t.out += "markdown summary: " + j.markdown_path + "\n";
  if (!j.kcidb_path.empty()) t.out += "KCIDB file: " + j.kcidb_path + "\n";
  if (!j.outcome.refusal.empty()) {
    t.err = j.outcome.refusal;
    return t;
  }
  const std::string db = j.outcome.db_path;
  if (j.ab)
    t.out += fmt::format("{} of {} assertion(s) failed, {} of {} metric(s) regressed, {} inconclusive (database {})\n",
                         j.failed_assertions(), j.outcome.assertions.size(), j.regressions(),
                         j.outcome.metrics.size(), j.inconclusive(), db);
  else
    t.out += fmt::format("{} of {} assertion(s) failed (database {})\n", j.failed_assertions(),
                         j.outcome.assertions.size(), db);
  return t;
}

}  // namespace harness::campaign
