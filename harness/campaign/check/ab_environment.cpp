// Baseline and candidate environments of an A/B campaign (see ab_environment.hpp).
#include "harness/campaign/check/ab_environment.hpp"

#include "harness/agent/client/loopback.hpp"
#include "harness/pool/engine.hpp"
#include "results/db.hpp"
#include "results/store/cases.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <sstream>

namespace harness::campaign {
namespace {

using nlohmann::json;

constexpr const char* kNotRecorded = "not recorded";
const char* const kAccelerator = "accelerator";
const char* const kRelease = "kernel release";
const char* const kCmdline = "kernel cmdline";
const char* const kCommit = "harness commit";
const char* const kEngine = "host engine";
// environment_json key -> field name (knobs as booted)
const std::vector<std::pair<std::string, std::string>>& booted_knobs() {
  static const std::vector<std::pair<std::string, std::string>> k = {{"swappiness", "swappiness as booted"},
                                                                     {"thp_enabled", "THP as booted"},
                                                                     {"mglru_enabled", "MGLRU as booted"},
                                                                     {"clocksource", "clocksource"}};
  return k;
}
std::string readback_field(const std::string& key) { return "knob " + key + " read back"; }

std::string scalar_text(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return kNotRecorded;
  if (j.is_object() && j.contains("error")) return "unreadable";
  return j.dump();
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::istringstream in(s);
  for (std::string x; in >> x;)
    // the VM's name is its stratum (the plan compares it); the accelerator is its own field
    if (x.rfind("harness.name=", 0) != 0 && x.rfind("harness.accelerator=", 0) != 0) w.push_back(x);
  return w;
}

using harness::text::join;

/// The values the cases recorded, "; " between them; "(no case)" when none did.
std::string values_text(const std::set<std::string>& v) { return v.empty() ? std::string("(no case)") : join(v, "; "); }

/// cases.engine_kind as recorded (schema version 7). A case of an older DB did not record it:
/// guessed from host_uri (cases, where the DB has the column), else from the attempt's
/// "NAME URL" (ab_environment.hpp "host engine").
std::string engine_of(const std::optional<std::string>& engine_kind, const std::optional<std::string>& host_uri,
                      const std::optional<std::string>& attempt_host) {
  if (engine_kind && !engine_kind->empty()) return *engine_kind;
  if (host_uri && !host_uri->empty()) return pool::engine_kind_of_host(*host_uri);
  if (!attempt_host || attempt_host->empty()) return kNotRecorded;
  const auto sp = attempt_host->find(' ');
  const std::string url = sp == std::string::npos ? *attempt_host : attempt_host->substr(sp + 1);
  return agent::url_is_loopback(url) ? "local guest (agent on loopback)" : "remote agent";
}

/// The variant of `c` named `name` (nullptr when absent).
const Variant* variant_of(const Campaign& c, const std::string& name) {
  for (const auto& v : c.variants)
    if (v.name == name) return &v;
  return nullptr;
}

/// Value each variant writes to knob `key` ("" when it does not write it).
std::string written(const Variant* v, const std::string& key) {
  if (!v) return "";
  for (const auto& [k, x] : v->sysctls)
    if (k == key) return x;
  for (const auto& [k, x] : v->sysfs)
    if (k == key) return x;
  return "";
}

std::set<std::string> knob_keys(const Variant* v) {
  std::set<std::string> out;
  if (!v) return out;
  for (const auto& [k, x] : v->sysctls) out.insert(k);
  for (const auto& [k, x] : v->sysfs) out.insert(k);
  return out;
}

bool sets_anything(const Variant* v) {
  return v && (!v->sysctls.empty() || !v->sysfs.empty() || !v->cmdline.empty() || !v->kernel_image_dir.empty());
}

/// The cmdline words of each case without `own` (the variant's own parameters), as one text per case.
std::set<std::string> cmdlines_without(const VariantEnvironment& e, const std::vector<std::string>& own) {
  std::set<std::string> out;
  for (const auto& w : e.cmdline_words) {
    std::vector<std::string> kept;
    for (const auto& x : w)
      if (std::find(own.begin(), own.end(), x) == own.end()) kept.push_back(x);
    out.insert(join(kept, " "));
  }
  return out;
}

std::set<std::string> field(const VariantEnvironment& e, const std::string& f) {
  const auto it = e.fields.find(f);
  return it == e.fields.end() ? std::set<std::string>{} : it->second;
}

}  // namespace

VariantEnvironment read_variant_environment(results::Db& db, const std::string& variant, const std::string& db_label) {
  VariantEnvironment e;
  e.variant = variant;
  e.db = db_label;
  for (const auto& [c, attempt_host] : results::completed_variant_cases(db, variant)) {
    ++e.cases;
    auto put = [&](const std::string& f, const std::optional<std::string>& v) {
      e.fields[f].insert(v && !v->empty() ? *v : std::string(kNotRecorded));
    };
    put(kAccelerator, c.accelerator);
    put(kRelease, c.kernel_release);
    const auto& commit = c.source_commit;
    put(kCommit, commit ? std::optional<std::string>(*commit + (c.source_dirty.value_or(0) ? "+dirty" : ""))
                        : std::nullopt);
    put(kEngine, engine_of(c.engine_kind, c.host_uri, attempt_host));
    const json env = json::parse(c.environment_json.value_or("{}"), nullptr, false);
    const json out = json::parse(c.outcome_json.value_or("{}"), nullptr, false);
    const json envo = env.is_object() ? env : json::object();
    if (envo.contains("cmdline") && envo["cmdline"].is_string()) {
      const auto w = words(envo["cmdline"].get<std::string>());
      e.cmdline_words.insert(w);
      put(kCmdline, join(w, " "));
    } else {
      put(kCmdline, std::nullopt);
    }
    for (const auto& [key, name] : booted_knobs())
      put(name, envo.contains(key) ? scalar_text(envo[key]) : std::string(kNotRecorded));
    if (out.is_object() && out.contains("variant") && out["variant"].is_object() &&
        out["variant"].contains("settings") && out["variant"]["settings"].is_object())
      for (const auto& [key, s] : out["variant"]["settings"].items()) {
        if (!s.is_object()) continue;
        put(readback_field(key), s.contains("readback") ? scalar_text(s["readback"]) : std::string(kNotRecorded));
        e.knob_before[key].insert(s.contains("before") ? scalar_text(s["before"]) : std::string(kNotRecorded));
      }
  }
  return e;
}

std::vector<EnvironmentField> EnvironmentComparison::unrequested() const {
  std::vector<EnvironmentField> out;
  for (const auto& f : fields)
    if (f.differs && !f.asked) out.push_back(f);
  return out;
}

EnvironmentComparison compare_environments(const VariantEnvironment& baseline, const VariantEnvironment& candidate,
                                           const Campaign& c) {
  EnvironmentComparison r{baseline, candidate, {}};
  const Variant* vb = variant_of(c, "baseline");
  const Variant* vc = variant_of(c, "candidate");
  const std::string kb = vb ? vb->kernel_image_dir : "", kc = vc ? vc->kernel_image_dir : "";
  const std::vector<std::string> cb = vb ? vb->cmdline : std::vector<std::string>{},
                                 cc = vc ? vc->cmdline : std::vector<std::string>{};
  const bool kernel_asked = kb != kc;
  const bool boot_asked = kernel_asked || cb != cc;
  auto add = [&](const std::string& name, const std::set<std::string>& b, const std::set<std::string>& k, bool asked,
                 const std::string& why) {
    EnvironmentField f{name, values_text(b), values_text(k), b != k, false, ""};
    if (f.differs && asked) {
      f.asked = true;
      f.why = why;
    }
    r.fields.push_back(f);
  };
  add(kAccelerator, field(baseline, kAccelerator), field(candidate, kAccelerator), false, "");
  add(kRelease, field(baseline, kRelease), field(candidate, kRelease), kernel_asked,
      "variants.*.kernel.image_dir differ");
  add(kCmdline + std::string(" (without the variants' own parameters)"), cmdlines_without(baseline, cb),
      cmdlines_without(candidate, cc), false, "");
  for (const auto& [key, name] : booted_knobs())
    add(name, field(baseline, name), field(candidate, name), boot_asked,
        "the variants boot differently (kernel or cmdline)");
  std::set<std::string> keys = knob_keys(vb);
  for (const auto& k : knob_keys(vc)) keys.insert(k);
  for (const auto& k : keys) {
    const std::string name = readback_field(k);
    add(name, field(baseline, name), field(candidate, name), written(vb, k) != written(vc, k),
        "the variants write it differently");
  }
  add(kCommit, field(baseline, kCommit), field(candidate, kCommit), false, "");
  add(kEngine, field(baseline, kEngine), field(candidate, kEngine), false, "");
  return r;
}

std::string same_environment_warning(const EnvironmentComparison& e, const Campaign& c) {
  const Variant* vb = variant_of(c, "baseline");
  const Variant* vc = variant_of(c, "candidate");
  if (!sets_anything(vc) || e.baseline.cases == 0 || e.candidate.cases == 0) return "";
  const bool differs_by_design = !vb || vb->sysctls != vc->sysctls || vb->sysfs != vc->sysfs ||
                                 vb->cmdline != vc->cmdline || vb->kernel_image_dir != vc->kernel_image_dir;
  if (!differs_by_design) return "";
  if (field(e.baseline, kRelease) != field(e.candidate, kRelease)) return "";
  if (e.baseline.cmdline_words != e.candidate.cmdline_words) return "";
  // each knob the candidate writes: is its read-back what the baseline runs with?
  for (const auto& k : knob_keys(vc)) {
    std::set<std::string> base;  // the baseline writes it too: its read-back; else the value as booted
    if (!written(vb, k).empty()) {
      base = field(e.baseline, readback_field(k));
    } else if (const auto it = e.candidate.knob_before.find(k); it != e.candidate.knob_before.end()) {
      base = it->second;
    }
    if (field(e.candidate, readback_field(k)) != base) return "";
  }
  return fmt::format(
      "the candidate's variant sets something ({}), yet its {} case(s) recorded the same kernel release ({}), kernel "
      "command line and knob values as the baseline's {} case(s): this comparison is A/A. Check that "
      "variants.candidate points at what you meant to test (e.g. kernel.image_dir at an image built with `harness vm "
      "image --kernel ... --out DIR` from the new kernel, not at a copy of the default image).",
      join(std::vector<std::string>{vc->kernel_image_dir.empty() ? "" : "kernel image " + vc->kernel_image_dir,
                                    vc->cmdline.empty() ? "" : "cmdline " + join(vc->cmdline, " "),
                                    vc->sysctls.empty() && vc->sysfs.empty() ? "" : "knobs"}, " ")
          .c_str(),
      e.candidate.cases, values_text(field(e.candidate, kRelease)), e.baseline.cases);
}

std::string environment_text(const EnvironmentComparison& e) {
  std::vector<std::array<std::string, 4>> rows{{"field", "baseline (" + std::to_string(e.baseline.cases) + " cases)",
                                                "candidate (" + std::to_string(e.candidate.cases) + " cases)", "note"}};
  for (const auto& f : e.fields)
    rows.push_back({f.field, f.baseline, f.candidate,
                    !f.differs ? "same" : f.asked ? "differs, asked for: " + f.why : "DIFFERS, not asked for"});
  std::array<std::size_t, 4> w{};
  for (const auto& r : rows)
    for (std::size_t j = 0; j < 3; ++j) w[j] = std::max(w[j], std::min<std::size_t>(r[j].size(), 60));
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t j = 0; j < 4; ++j) line += (j ? "  " : "") + (j < 3 ? fmt::format("{:<{}}", r[j], w[j]) : r[j]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string environment_markdown(const EnvironmentComparison& e) {
  auto cell = [](const std::string& s) {
    std::string o;
    for (char ch : s) o += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return o;
  };
  std::string md = "### Environment\n\nWhat the cases recorded: baseline " + std::to_string(e.baseline.cases) +
                   " case(s) from `" + e.baseline.db + "`, candidate " + std::to_string(e.candidate.cases) +
                   " case(s) from `" + e.candidate.db + "`.\n\n| field | baseline | candidate | note |\n| --- | --- | "
                   "--- | --- |\n";
  for (const auto& f : e.fields)
    md += "| " + cell(f.field) + " | " + cell(f.baseline) + " | " + cell(f.candidate) + " | " +
          (!f.differs ? "same" : f.asked ? "differs, asked for: " + f.why : "**differs, not asked for**") + " |\n";
  return md + "\n";
}

Checked check_environment_drift(const EnvironmentComparison& e, const std::string& baseline_db) {
  const auto u = e.unrequested();
  if (u.empty()) return {};
  std::string msg = "harness check: --baseline-db " + baseline_db +
                    ": the baseline's cases ran in another environment than this run's candidate cases, in what the "
                    "campaign does not ask to change; refusing to compare (a difference here would be read as the "
                    "candidate's effect). Differences (baseline vs candidate):\n";
  for (const auto& f : u) msg += "  " + f.field + ": " + f.baseline + " vs " + f.candidate + "\n";
  msg += "Run the baseline again in this environment (docs/CI.md \"Storing and refreshing the baseline DB\"), or give "
         "--allow-env-drift to compare anyway (both environments are then recorded in the JUnit and Markdown).\n";
  return problem(std::move(msg));
}

std::set<std::string> recorded_commits(results::Db& db, const std::string& variant) {
  return field(read_variant_environment(db, variant, db.path()), kCommit);
}

}  // namespace harness::campaign
