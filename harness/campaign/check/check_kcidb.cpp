// `harness check --kcidb FILE`: the judgement as KCIDB I/O 5.3 JSON (check_kcidb.hpp).
#include "harness/campaign/check/check_kcidb.hpp"

#include "harness/campaign/check/assertions.hpp"
#include "harness/campaign/check/judgement.hpp"
#include "harness/digest/sha256.hpp"
#include "harness/text/join.hpp"
#include "harness/text/utc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

namespace harness::campaign {
namespace {

using ojson = nlohmann::ordered_json;

/// One guest kernel as the cases recorded it (a KCIDB checkout and its build).
struct Kernel {
  std::string release, version, machine;  ///< "" = not recorded
  std::string hash;                       ///< first 12 hex of SHA-256 over the three, the ids' part
  bool under_test = false;                ///< A/B: a candidate case ran it; other designs: every kernel
  std::set<std::string> variants, accelerators;
  std::vector<const CaseKernel*> cases;
};

/// The judged cases' kernels, in order of first appearance, and each case id's kernel index.
struct Kernels {
  bool ab = false;  ///< A/B design: only the candidate's kernels are under test
  std::vector<Kernel> all;
  std::map<std::string, std::size_t> of_case;

  /// The kernel of (release, version, machine), added when new.
  std::size_t at(const std::string& release, const std::string& version, const std::string& machine) {
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].release == release && all[i].version == version && all[i].machine == machine) return i;
    Kernel k;
    k.release = release, k.version = version, k.machine = machine;
    k.hash = digest::sha256_hex(release + "\n" + version + "\n" + machine).substr(0, 12);
    k.under_test = !ab;
    all.push_back(std::move(k));
    return all.size() - 1;
  }
  /// The kernel of a case id; cases the DB holds no row for ("pending") share the kernel that is
  /// not recorded.
  std::size_t of(const std::string& case_id) {
    const auto it = of_case.find(case_id);
    return it != of_case.end() ? it->second : at("", "", "");
  }
};

Kernels kernels_of(const KcidbInput& in, bool ab) {
  Kernels k;
  k.ab = ab;
  for (const auto& c : in.cases) {
    const std::size_t i = k.at(c.release, c.version, c.machine);
    k.all[i].cases.push_back(&c);
    if (!c.variant.empty()) k.all[i].variants.insert(c.variant);
    if (!c.accelerator.empty()) k.all[i].accelerators.insert(c.accelerator);
    k.of_case[c.case_id] = i;
  }
  for (auto& x : k.all) x.under_test = !ab || x.variants.count("candidate");
  return k;
}

/// What every object of a synthetic DB's file carries (comment prefix, misc.synthetic).
struct Marks {
  bool synthetic = false;
  std::string comment(const std::string& text) const {
    return synthetic ? results::synthetic_banner() + "; " + text : text;
  }
  void misc(ojson& m) const {
    if (synthetic) m["synthetic"] = results::synthetic_banner();
  }
};

std::string kernel_label(const Kernel& k) {
  if (k.release.empty()) return "guest kernel not recorded";
  return "guest kernel " + k.release + (k.version.empty() ? "" : " (" + k.version + ")") +
         (k.machine.empty() ? "" : " " + k.machine);
}

std::string checkout_id(const KcidbOptions& o, const Kernel& k) { return o.origin + ":kernel-" + k.hash; }
std::string build_id(const KcidbOptions& o, const Kernel& k) { return o.origin + ":build-" + k.hash; }

ojson checkout_of(const Kernel& k, const KcidbOptions& o, const Marks& m) {
  ojson c;
  c["id"] = checkout_id(o, k);
  c["origin"] = o.origin;
  if (k.under_test && !o.git_url.empty()) c["git_repository_url"] = o.git_url;
  if (k.under_test && !o.git_commit.empty()) {
    c["git_commit_hash"] = o.git_commit;
    c["patchset_hash"] = "";  // the commit as it is: no patches applied by the harness
  }
  c["comment"] = m.comment(kernel_label(k) + (k.release.empty() ? ""
                                               : k.under_test ? ", the kernel under test"
                                                              : ", the baseline's kernel"));
  ojson misc{{"kernel_release", k.release}, {"uname_version", k.version}, {"machine", k.machine},
             {"source", "what the guest reported (uname -r, -v, -m); the harness does not see the kernel's source"}};
  m.misc(misc);
  c["misc"] = std::move(misc);
  return c;
}

ojson build_of(const Kernel& k, const KcidbOptions& o, const Marks& m) {
  static const std::regex arch("[a-z0-9_]*");
  ojson b;
  b["id"] = build_id(o, k);
  b["origin"] = o.origin;
  b["checkout_id"] = checkout_id(o, k);
  b["comment"] = m.comment(kernel_label(k));
  if (!k.machine.empty() && std::regex_match(k.machine, arch)) b["architecture"] = k.machine;
  if (!k.release.empty()) b["status"] = "PASS";  // it booted: a guest ran a case on it and reported its release
  ojson misc{{"kernel_release", k.release}, {"uname_version", k.version}, {"cases", k.cases.size()},
             {"variants", std::vector<std::string>(k.variants.begin(), k.variants.end())}};
  m.misc(misc);
  b["misc"] = std::move(misc);
  return b;
}

/// A KCIDB test path part: [a-zA-Z0-9_-] kept, anything else '_'.
std::string path_part(const std::string& s) {
  std::string o;
  for (char ch : s) o += std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' ? ch : '_';
  return o.empty() ? "_" : o;
}

/// A number KCIDB can hold: finite, else null.
ojson finite(std::optional<double> v) { return v && std::isfinite(*v) ? ojson(*v) : ojson(nullptr); }

/// The fields a test shares: ids, origin, build, path, status, comment; start and duration from
/// `cases` (the first start, the last end); environment (the accelerators); the published files.
struct TestBase {
  const KcidbOptions& o;
  const Marks& marks;
  std::string run_key;
  std::vector<ojson> files;

  ojson make(const std::string& key, const Kernel& k, const std::string& path, const std::string& status,
             const std::string& comment, const std::vector<const CaseKernel*>& cases) const {
    ojson t;
    t["id"] = o.origin + ":" + run_key + ":" + key + "@" + k.hash;
    t["origin"] = o.origin;
    t["build_id"] = build_id(o, k);
    t["path"] = path;
    t["status"] = status;
    t["comment"] = marks.comment(comment);
    std::optional<std::int64_t> first, last;
    for (const auto* c : cases) {
      if (c->started_unix_ns) first = std::min(first.value_or(*c->started_unix_ns), *c->started_unix_ns);
      if (c->ended_unix_ns) last = std::max(last.value_or(*c->ended_unix_ns), *c->ended_unix_ns);
    }
    if (first) t["start_time"] = text::utc_text(*first);
    if (first && last && *last >= *first) t["duration"] = static_cast<double>(*last - *first) / 1e9;
    std::set<std::string> accel;
    for (const auto* c : cases)
      if (!c->accelerator.empty()) accel.insert(c->accelerator);
    const std::vector<std::string> a(accel.begin(), accel.end());
    t["environment"] = {{"comment", "the cases' accelerator: " + (a.empty() ? std::string("not recorded") : text::join(a))},
                        {"misc", {{"accelerators", a}}}};
    if (!files.empty()) t["output_files"] = files;
    return t;
  }
};

/// The worst measured value of an assertion's cases (the highest under a max bound, the lowest
/// under a min bound) with its unit; none for states and clean/unclean.
std::optional<ojson> worst_number(const Assertion& a, const std::vector<const Measurement*>& ms) {
  std::optional<double> worst;
  std::string unit;
  for (const auto* m : ms) {
    if (!m->value || !std::isfinite(*m->value) || m->unit == "state" || m->unit == "clean") continue;
    worst = !worst ? *m->value : a.min ? std::min(*worst, *m->value) : std::max(*worst, *m->value);
    unit = m->unit;
  }
  if (!worst) return std::nullopt;
  ojson n{{"value", *worst}};
  if (unit == "s" || unit == "ms") n["unit"] = unit;
  return n;
}

/// The tests of one assertion: one per kernel its cases ran (MISS on every kernel under test
/// when it checked no case, PASS when it checked none and passed).
void assertion_tests(std::size_t i, const AssertionResult& r, const Assertion& a, Kernels& ks, const TestBase& base,
                     const std::string& campaign, ojson& tests) {
  std::map<std::size_t, std::vector<const Measurement*>> by_kernel;
  for (const auto& m : r.measured) by_kernel[ks.of(m.case_id)].push_back(&m);
  if (by_kernel.empty())
    for (std::size_t k = 0; k < ks.all.size(); ++k)
      if (ks.all[k].under_test) by_kernel[k];
  if (by_kernel.empty()) by_kernel[ks.at("", "", "")];
  const std::string path = "reclaim_harness." + path_part(a.kind);
  for (const auto& [k, ms] : by_kernel) {
    const Kernel& kernel = ks.all[k];
    std::vector<const CaseKernel*> cases;
    ojson measured = ojson::array(), failures = ojson::array();
    for (const auto* m : ms) {
      measured.push_back({{"case", m->case_id}, {"quantity", m->quantity}, {"value", finite(m->value)},
                          {"unit", m->unit}, {"passed", m->passed}});
      if (!m->passed) failures.push_back(m->detail);
      for (const auto* c : kernel.cases)
        if (c->case_id == m->case_id) cases.push_back(c);
    }
    const std::string status = ms.empty() ? (r.passed ? "PASS" : "MISS") : failures.empty() ? "PASS" : "FAIL";
    const std::string comment = fmt::format("{}: {} on {} case(s), {} failed{}", r.name, status, ms.size(),
                                            failures.size(), ms.empty() && !r.passed ? " (" + r.failures.front() + ")" : "");
    ojson t = base.make(fmt::format("a{}.{}", i, path_part(a.kind)), kernel, path, status, comment, cases);
    if (auto n = worst_number(a, ms)) t["number"] = *n;
    ojson misc{{"campaign", campaign}, {"assertion", r.name}, {"kind", a.kind}, {"min", finite(a.min)},
               {"max", finite(a.max)}, {"cases_checked", ms.size()}, {"failed", failures.size()},
               {"measured", std::move(measured)}, {"failures", std::move(failures)}};
    base.marks.misc(misc);
    t["misc"] = std::move(misc);
    tests.push_back(std::move(t));
  }
}

/// KCIDB status of a metric verdict (analysis/compare/regression.hpp).
std::string metric_status(const std::string& verdict) {
  if (verdict == "regression") return "FAIL";
  if (verdict == "ok" || verdict == "ok-decided") return "PASS";
  if (verdict == "no data") return "SKIP";
  return "DONE";  // reported (no tolerance), inconclusive (the interval decides nothing yet)
}

/// The kernels under test (A/B: the candidate's), the "not recorded" one when none is known.
std::vector<std::size_t> under_test(Kernels& ks) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < ks.all.size(); ++k)
    if (ks.all[k].under_test) out.push_back(k);
  if (out.empty()) out.push_back(ks.at("", "", ""));
  return out;
}

/// A/B: one test per metric against each kernel under test, and the refusal when the
/// environments were not compared.
void ab_tests(const KcidbInput& in, Kernels& ks, const TestBase& base, ojson& tests) {
  const auto& out = in.judgement->outcome;
  std::vector<std::string> baseline_builds;
  for (const auto& k : ks.all)
    if (k.variants.count("baseline")) baseline_builds.push_back(build_id(base.o, k));
  for (std::size_t k : under_test(ks)) {
    const Kernel& kernel = ks.all[k];
    std::vector<const CaseKernel*> cand;
    for (const auto* c : kernel.cases)
      if (c->variant == "candidate") cand.push_back(c);
    if (!out.refusal.empty()) {
      ojson t = base.make("environment", kernel, "reclaim_harness.environment", "ERROR",
                          "the candidate was not compared with the baseline: their environments differ", cand);
      ojson misc{{"campaign", out.campaign}, {"refusal", out.refusal}};
      base.marks.misc(misc);
      t["misc"] = std::move(misc);
      tests.push_back(std::move(t));
    }
    for (const auto& m : out.metrics) {
      const std::string status = metric_status(m.verdict);
      ojson t = base.make("regression." + path_part(m.metric), kernel, "reclaim_harness.regression." + path_part(m.metric),
                          status, m.metric + " candidate / baseline: " + m.verdict + " (" + m.detail + ")", cand);
      if (m.ratio && std::isfinite(*m.ratio)) t["number"] = {{"value", *m.ratio}};
      ojson misc{{"campaign", out.campaign}, {"metric", m.metric}, {"unit", m.unit}, {"verdict", m.verdict},
                 {"change", m.change}, {"ratio", finite(m.ratio)}, {"lower", finite(m.lower)}, {"upper", finite(m.upper)},
                 {"level", m.level}, {"baseline_mean", finite(m.baseline_mean)}, {"candidate_mean", finite(m.candidate_mean)},
                 {"pairs", m.pairs}, {"strata", m.strata}, {"max_ratio", finite(m.max_ratio)},
                 {"min_ratio", finite(m.min_ratio)}, {"baseline_builds", baseline_builds}};
      base.marks.misc(misc);
      t["misc"] = std::move(misc);
      tests.push_back(std::move(t));
    }
  }
}

/// This judgement's run key: SHA-256 of the origin, campaign, judged cases and the provenance's
/// time and command line (first 16 hex).
std::string run_key(const KcidbInput& in, const KcidbOptions& o) {
  std::string s = o.origin + "\n" + in.judgement->outcome.campaign + "\n" + in.provenance->generated_utc + "\n" +
                  in.provenance->command_line + "\n";
  for (const auto& c : in.cases) s += c.case_id + " " + std::to_string(c.started_unix_ns.value_or(0)) + "\n";
  return digest::sha256_hex(s).substr(0, 16);
}

/// The JUnit and Markdown files as KCIDB resources under o.artifacts_url (none without it).
std::vector<ojson> published_files(const KcidbInput& in, const KcidbOptions& o) {
  std::vector<ojson> files;
  if (o.artifacts_url.empty()) return files;
  std::string base = o.artifacts_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  for (const auto& p : {in.junit_path, in.markdown_path})
    if (!p.empty()) {
      const std::string name = std::filesystem::path(p).filename().string();
      files.push_back({{"name", name}, {"url", base + "/" + name}});
    }
  return files;
}

}  // namespace

Checked check_kcidb_options(const KcidbOptions& o) {
  static const std::regex origin("[a-z0-9_]+"), commit("[0-9a-f]{40}"), https("https://[^\\s\\x00]+");
  if (!std::regex_match(o.origin, origin))
    return problem("--kcidb-origin " + o.origin + ": a KCIDB origin is lowercase letters, digits and '_' ([a-z0-9_]+)");
  if (!o.git_commit.empty() && !std::regex_match(o.git_commit, commit))
    return problem("--kcidb-git-commit " + o.git_commit +
                   ": a KCIDB git_commit_hash is the full commit, 40 lowercase hex digits");
  if (!o.git_url.empty() && !std::regex_match(o.git_url, https))
    return problem("--kcidb-git-url " + o.git_url + ": KCIDB I/O 5 takes an https:// repository URL");
  if (!o.artifacts_url.empty() && !std::regex_match(o.artifacts_url, https))
    return problem("--kcidb-artifacts-url " + o.artifacts_url +
                   ": an https:// URL where the JUnit and Markdown files are published");
  return {};
}

nlohmann::ordered_json kcidb_document(const KcidbInput& in, const KcidbOptions& o) {
  const Judgement& j = *in.judgement;
  Kernels ks = kernels_of(in, j.ab);
  const Marks marks{in.provenance->synthetic};
  const TestBase base{o, marks, run_key(in, o), published_files(in, o)};
  ojson tests = ojson::array();
  for (std::size_t i = 0; i < j.outcome.assertions.size() && i < in.campaign->assertions.size(); ++i)
    assertion_tests(i, j.outcome.assertions[i], in.campaign->assertions[i], ks, base, j.outcome.campaign, tests);
  if (j.ab) ab_tests(in, ks, base, tests);
  ojson doc;
  doc["version"] = {{"major", kKcidbMajor}, {"minor", kKcidbMinor}};
  doc["checkouts"] = ojson::array();
  doc["builds"] = ojson::array();
  for (const auto& k : ks.all) {
    doc["checkouts"].push_back(checkout_of(k, o, marks));
    doc["builds"].push_back(build_of(k, o, marks));
  }
  doc["tests"] = std::move(tests);
  return doc;
}

void write_kcidb(const KcidbInput& in, const KcidbOptions& o) {
  std::ofstream f(o.path);
  if (!f) throw std::runtime_error(o.path + ": cannot write the KCIDB file");
  f << kcidb_document(in, o).dump(2) << "\n";
  if (!f) throw std::runtime_error(o.path + ": write failed");
}

}  // namespace harness::campaign
