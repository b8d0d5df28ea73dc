// Campaign YAML loader: strict (unknown keys rejected), every error with file:line:col
// and the dotted field path (the shared reader, harness/yaml/strict_yaml.hpp). The
// `provider:` block is parsed by its engine (harness/pool/engine.hpp). Rules come from the
// study, docs/PROTOCOL.md and case/SPEC.md.
#include "harness/campaign/campaign.hpp"

#include "harness/campaign/campaign_arms.hpp"
#include "harness/campaign/pilot_match.hpp"
#include "harness/case/policy.hpp"
#include "harness/json/limited_parse.hpp"
#include "analysis/regression.hpp"
#include "analysis/verdict.hpp"
#include "harness/case/spec.hpp"
#include "harness/case/variant.hpp"
#include "harness/text/join.hpp"
#include "harness/yaml/strict_yaml.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace harness::campaign {

namespace {

using yaml::Section;
using yaml::check_name;
using yaml::key_node;
using yaml::positive_int;

/// design.dose_mib.accept_differences (optional, with from_pilot): a list of the names of
/// pilot_match.hpp pilot_difference_names(), each once.
void accept_differences(Section& p, Campaign& c) {
  YAML::Node a = p.get("accept_differences", false);
  if (!a) return;
  const auto& known = pilot_difference_names();
  const std::string list = text::join(known);
  if (!a.IsSequence()) p.fail(a, p.field("accept_differences"), "expected a list of settings (any of " + list + ")");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string f = p.field("accept_differences") + "[" + std::to_string(i) + "]";
    const auto v = p.as<std::string>(a[i], f);
    if (std::find(known.begin(), known.end(), v) == known.end())
      p.fail(a[i], f, "'" + v + "' is not a setting compared with the pilot (one of " + list + ")");
    if (std::find(c.dose_accept_differences.begin(), c.dose_accept_differences.end(), v) != c.dose_accept_differences.end())
      p.fail(a[i], f, "'" + v + "' is listed twice");
    c.dose_accept_differences.push_back(v);
  }
}

/// design.vms (optional): the VMs the design uses, which must be the provider's VMs
/// (the engine may fix their number: EngineConfig::count_mismatch).
void design_vms(Section& s, Campaign& c) {
  YAML::Node v = s.get("vms", false);
  if (!v) return;  // the provider's VMs
  if (!v.IsSequence() || v.size() == 0) s.fail(v, s.field("vms"), "expected a non-empty list of VM names");
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string f = s.field("vms") + "[" + std::to_string(i) + "]";
    const auto n = s.as<std::string>(v[i], f);
    check_name(s, v[i], f, n, "[A-Za-z0-9_-]{1,32}");
    if (!seen.insert(n).second) s.fail(v[i], f, "duplicate VM '" + n + "'");
    names.push_back(n);
  }
  if (const auto why = c.engine->count_mismatch(names.size()); !why.empty()) s.fail(v, s.field("vms"), why);
  const std::set<std::string> provided(c.vms.begin(), c.vms.end());
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!provided.count(names[i]))
      s.fail(v[i], s.field("vms") + "[" + std::to_string(i) + "]",
             "'" + names[i] + "' is not a VM of the provider (" + c.engine->vm_names_source() + ")");
  if (names.size() != provided.size())
    s.fail(v, s.field("vms"), "must list every VM of provider.vms (" + std::to_string(provided.size()) + ")");
  c.vms = names;
}

/// The engines whose guests the harness boots per case with a variant's kernel and cmdline.
std::string booting_engines() {
  const std::string k = pool::engine_kinds_where([](const pool::Capabilities& x) { return x.boot_variants; });
  return k.empty() ? std::string("an engine that boots each case's guest") : k;
}

/// True when the campaign's engine boots each case's guest with its variant.
bool boots_variants(const Campaign& c) {
  const auto* e = pool::find_engine(c.provider);
  return e && e->capabilities.boot_variants;
}

/// The provider block: `kind` and `overcommit` here, the rest by the engine of that kind.
void provider_block(Section& top, Campaign& c) {
  Section s = top.child("provider");
  c.provider = s.scalar<std::string>("kind");
  const pool::Engine* e = pool::find_engine(c.provider);
  if (!e) {
    s.fail(s.at("kind"), s.field("kind"), "'" + c.provider + "' is not one of " + text::join(pool::engine_kinds()));
  }
  const bool overcommit = s.scalar<bool>("overcommit", false);
  auto cfg = e->parse(s, pool::ParseContext{c.file, c.vcpus, c.memory_mib});
  cfg->kind = c.provider;
  cfg->overcommit = overcommit;
  c.vms = cfg->vms;
  c.engine = std::move(cfg);
  s.finish();
}

/// Reads a {name: value} mapping of a variant (sysctls or sysfs), values as text.
std::vector<std::pair<std::string, std::string>> variant_knobs(Section& v, const std::string& key, bool sysfs) {
  std::vector<std::pair<std::string, std::string>> out;
  YAML::Node m = v.get(key, false);
  if (!m || m.IsNull()) return out;
  const std::string f = v.field(key);
  if (!m.IsMap())
    v.fail(m, f, sysfs ? "expected a mapping {/sys/kernel/mm/PATH: value}" : "expected a mapping {vm.NAME: value}");
  for (const auto& kv : m) {
    const std::string k = kv.first.Scalar();
    const std::string kf = f + "." + k;
    if (sysfs) {
      if (auto why = harness::case_::sysfs_path_problem(k)) v.fail(kv.first, kf, "'" + k + "' " + *why);
    } else if (auto why = harness::case_::sysctl_name_problem(k)) {
      v.fail(kv.first, kf, "'" + k + "' " + *why);
    }
    if (!kv.second.IsScalar() || kv.second.IsNull())
      v.fail(kv.second.IsDefined() && !kv.second.IsNull() ? kv.second : kv.first, kf, "expected a scalar value");
    const std::string val = kv.second.Scalar();
    if (!harness::case_::valid_variant_value(val))
      v.fail(kv.second, kf, "value '" + val + "' does not match [A-Za-z0-9 _.,:=+-]{1,64}");
    out.emplace_back(k, val);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Why a relative path cannot be resolved when the campaign's folder is not known.
std::string unknown_folder(const std::string& path) {
  return "'" + path + "' is relative to the campaign file's folder, which this DB does not record (planned by an "
         "earlier harness from a relative path): give the campaign FILE (`harness run FILE DB`)";
}

/// variants: {baseline, candidate} (design ab-pairs only).
void ab_variants(Section& top, Campaign& c) {
  const bool ab = c.design == "ab-pairs";
  if (!top.has("variants")) {
    if (ab)
      top.fail(top.node()["design"]["kind"], "design.kind",
               "ab-pairs needs a top-level `variants: {baseline: ..., candidate: ...}` (docs/CAMPAIGN.md)");
    return;
  }
  YAML::Node vn = top.get("variants", false);
  if (!ab)
    top.fail(key_node(top.node(), "variants"), "variants",
             "only for design.kind ab-pairs (this campaign is " + c.design + ")");
  Section vs(vn, "variants", top.file());
  for (const char* name : {"baseline", "candidate"}) {
    YAML::Node n = vs.get(name, true);
    Section v(n.IsNull() ? YAML::Node(YAML::NodeType::Map) : n, vs.field(name), top.file());
    Variant x;
    x.name = name;
    x.line = static_cast<int>(key_node(vn, name).Mark().line) + 1;
    x.sysctls = variant_knobs(v, "sysctls", false);
    x.sysfs = variant_knobs(v, "sysfs", true);
    if (YAML::Node cl = v.get("cmdline", false); cl && !cl.IsNull()) {
      if (!cl.IsSequence()) v.fail(cl, v.field("cmdline"), "expected a list of kernel parameters");
      if (!boots_variants(c))
        v.fail(cl, v.field("cmdline"), "needs provider.kind " + booting_engines() + " (the harness boots the guest with it)");
      for (std::size_t i = 0; i < cl.size(); ++i) {
        const std::string f = v.field("cmdline") + "[" + std::to_string(i) + "]";
        const auto p = v.as<std::string>(cl[i], f);
        if (!harness::case_::valid_cmdline_param(p)) v.fail(cl[i], f, "'" + p + "' does not match [A-Za-z0-9_.,=:+-]+");
        x.cmdline.push_back(p);
      }
    }
    if (v.has("kernel")) {
      YAML::Node kn = v.node()["kernel"];
      if (!boots_variants(c))
        v.fail(kn, v.field("kernel"), "needs provider.kind " + booting_engines() + " (the harness boots the guest with it)");
      Section k = v.child("kernel");
      const std::string dir = k.scalar<std::string>("image_dir");
      const YAML::Node at = kn["image_dir"];
      if (dir.empty()) k.fail(at, k.field("image_dir"), "must name a directory built by `harness vm image --out DIR`");
      std::filesystem::path p(dir);
      if (p.is_relative()) {
        if (!c.base_dir) k.fail(at, k.field("image_dir"), unknown_folder(dir));
        p = std::filesystem::path(*c.base_dir) / p;
      }
      p = std::filesystem::absolute(p).lexically_normal();
      const auto mf = p / "manifest.json";
      if (!std::filesystem::exists(mf))
        k.fail(at, k.field("image_dir"),
               "'" + p.string() + "' holds no manifest.json (build it with `harness vm image --kernel ... --out DIR`)");
      try {
        const auto m = harness::json::parse_file(mf.string());
        x.kernel_release = m.is_object() && m.contains("kernel_release") && m["kernel_release"].is_string()
                               ? m["kernel_release"].get<std::string>()
                               : "";
      } catch (const std::exception& e) {
        k.fail(at, k.field("image_dir"), mf.string() + ": " + e.what());
      }
      if (x.kernel_release.empty()) k.fail(at, k.field("image_dir"), mf.string() + " names no kernel_release");
      // What a boot reads (harness/vm/image.cpp): a manifest alone is not an image.
      std::string absent;
      for (const char* f : {"vmlinuz", "initramfs.cpio.gz", "disk-base.img"})
        if (!std::filesystem::is_regular_file(p / f)) absent += std::string(absent.empty() ? "" : ", ") + f;
      if (!absent.empty())
        k.fail(at, k.field("image_dir"),
               "'" + p.string() + "' has a manifest.json but no " + absent +
                   " (not an image `harness vm image --out DIR` built, or one whose build did not finish)");
      x.kernel_image_dir = p.string();
      k.finish();
    }
    v.finish();
    c.variants.push_back(std::move(x));
  }
  vs.finish();
  bool boots = false;
  for (const auto& x : c.variants) boots = boots || !x.cmdline.empty() || !x.kernel_image_dir.empty();
  if (boots && !c.engine->fresh_guest_per_case)
    top.fail(key_node(top.node(), "variants"), "variants",
             "a variant with cmdline or kernel needs provider.fresh_guest_per_case: true (each case boots its "
             "variant's guest)");
}

/// regression: {alpha, tolerances, accept_insensitive} (design ab-pairs only).
void ab_regression(Section& top, Campaign& c) {
  if (!top.has("regression")) return;
  YAML::Node rn = top.node()["regression"];
  if (c.design != "ab-pairs")
    top.fail(key_node(top.node(), "regression"), "regression", "only for design.kind ab-pairs (this campaign is " + c.design + ")");
  Section r = top.child("regression");
  c.regression_alpha = r.scalar<double>("alpha", 0.05);
  if (!(c.regression_alpha > 0 && c.regression_alpha < 1))
    r.fail(rn["alpha"], r.field("alpha"), "must lie in (0, 1)");
  c.regression_accept_insensitive = r.scalar<bool>("accept_insensitive", false);  // plan_sensitivity.hpp
  YAML::Node tn = r.get("tolerances", false);
  if (tn && !tn.IsNull()) {
    if (!tn.IsMap()) r.fail(tn, r.field("tolerances"), "expected a mapping {metric: {max_ratio, min_ratio}}");
    const std::string names = text::join(analysis::regression_metrics(), ", ", [](const auto& m) { return m.name; });
    for (const auto& kv : tn) {
      Tolerance t;
      t.metric = kv.first.Scalar();
      t.line = static_cast<int>(kv.first.Mark().line) + 1;
      const std::string f = r.field("tolerances") + "." + t.metric;
      bool known = false;
      for (const auto& m : analysis::regression_metrics()) known = known || t.metric == m.name;
      if (!known) r.fail(kv.first, f, "'" + t.metric + "' is not a regression metric (" + names + ")");
      Section ts(kv.second, f, top.file());
      t.max_ratio = ts.optional_scalar<double>("max_ratio");
      t.min_ratio = ts.optional_scalar<double>("min_ratio");
      if (!t.max_ratio && !t.min_ratio) ts.fail(kv.second, f, "give max_ratio, min_ratio or both");
      if (t.max_ratio && !(*t.max_ratio > 0)) ts.fail(kv.second["max_ratio"], ts.field("max_ratio"), "must be > 0");
      if (t.min_ratio && !(*t.min_ratio > 0)) ts.fail(kv.second["min_ratio"], ts.field("min_ratio"), "must be > 0");
      if (t.max_ratio && t.min_ratio && !(*t.min_ratio < *t.max_ratio))
        ts.fail(kv.second["min_ratio"], ts.field("min_ratio"), "must be below max_ratio");
      ts.finish();
      c.tolerances.push_back(t);
    }
  }
  r.finish();
}

}  // namespace

bool allows_any_commit(const std::string& kind) { return kind == "smoke" || kind == "ci"; }

namespace {

Campaign parse_campaign_text(const std::string& text, const std::string& file,
                             const std::optional<std::string>& base_dir) {
  const YAML::Node root = yaml::parse(text, file);
  if (!root || root.IsNull()) throw CampaignError(file + ":1:1: empty campaign file");
  Campaign c;
  c.file = file;
  if (base_dir)  // absolute, so that what a relative path names does not depend on the working directory later
    c.base_dir = (base_dir->empty() ? std::filesystem::current_path() : std::filesystem::absolute(*base_dir))
                     .lexically_normal()
                     .string();
  c.yaml_text = text;
  Section top(root, "", file);

  c.name = top.scalar<std::string>("name");
  check_name(top, root["name"], "name", c.name, "[A-Za-z0-9._-]{1,48}");
  c.kind = top.scalar<std::string>("kind", std::string());
  if (!c.kind.empty() && c.kind != "smoke" && c.kind != "ci" && c.kind != "pilot" && c.kind != "confirmatory")
    top.fail(root["kind"], "kind", "'" + c.kind + "' is not one of smoke, ci, pilot, confirmatory");
  c.seed = top.scalar<std::uint64_t>("seed");
  c.pinned_commit = top.scalar<std::string>("pinned_commit");
  if (c.pinned_commit != "any" && c.pinned_commit != "build") check_name(top, root["pinned_commit"], "pinned_commit", c.pinned_commit, "[0-9a-f]{40}");

  {  // vm shape (study: 1 vCPU, 1 GiB)
    Section s = top.child("vm");
    c.vcpus = static_cast<int>(positive_int(s, "vcpus", 1));
    c.memory_mib = static_cast<int>(positive_int(s, "memory_mib", 1024));
    s.finish();
  }
  provider_block(top, c);
  {
    Section s = top.child("phases_s");
    c.warmup_s = static_cast<int>(positive_int(s, "warmup"));
    c.pressure_s = static_cast<int>(positive_int(s, "pressure"));
    c.recovery_s = static_cast<int>(positive_int(s, "recovery"));
    s.finish();
  }
  {
    Section s = top.child("cgroups");
    c.cgroup_parent = s.scalar<std::string>("parent", std::string("harness"));
    if (auto why = harness::case_::cgroup_parent_problem(c.cgroup_parent))
      s.fail(s.node()["parent"] ? s.node()["parent"] : s.node(), s.field("parent"), "'" + c.cgroup_parent + "' " + *why);
    c.bg_memory_max_mib = positive_int(s, "bg_memory_max_mib");
    c.bg_memory_high_mib = s.optional_scalar<std::int64_t>("bg_memory_high_mib");
    c.fg_memory_max_mib = s.optional_scalar<std::int64_t>("fg_memory_max_mib");
    c.fg_memory_low_mib = s.optional_scalar<std::int64_t>("fg_memory_low_mib");
    if (c.bg_memory_max_mib >= c.memory_mib)
      s.fail(s.node()["bg_memory_max_mib"], s.field("bg_memory_max_mib"), "must be below vm.memory_mib");
    s.finish();
  }
  {
    Section s = top.child("backend");
    {
      Section z = s.child("zram");
      c.zram_disksize_mib = positive_int(z, "disksize_mib");
      c.zram_algorithm = z.scalar<std::string>("algorithm");
      static const std::set<std::string> algos{"lzo", "lzo-rle", "lz4", "lz4hc", "zstd"};
      if (!algos.count(c.zram_algorithm))
        z.fail(z.node()["algorithm"], z.field("algorithm"),
               "'" + c.zram_algorithm + "' is not one of lzo, lzo-rle, lz4, lz4hc, zstd (6.1 cloud kernel)");
      c.zram_priority = z.scalar<int>("priority");
      z.finish();
    }
    {
      Section w = s.child("swapfile");
      c.swapfile_path = w.scalar<std::string>("path");
      if (auto why = harness::case_::unsafe_path_reason(c.swapfile_path)) w.fail(w.node()["path"], w.field("path"), *why);
      c.swapfile_priority = w.scalar<int>("priority");
      w.finish();
    }
    if (auto v = s.optional_scalar<std::string>("delayed_swapfile")) {
      if (*v == "off") c.delayed_swapfile = harness::case_::DelayedSwapfile::Off;
      else if (*v != "active")
        s.fail(s.node()["delayed_swapfile"], s.field("delayed_swapfile"),
               "'" + *v + "' is not one of active, off (the swapfile in delayed-activation before the trigger)");
    }
    if (c.swapfile_priority >= c.zram_priority)
      s.fail(s.node(), s.field("swapfile.priority"),
             "must be below zram.priority (the swapfile is the low-priority spill device, campaigns/README.md)");
    s.finish();
  }
  {
    Section s = top.child("pressure");
    c.allocation_mib = positive_int(s, "allocation_mib");
    c.active_set_mib = positive_int(s, "active_set_mib");
    if (c.allocation_mib <= c.bg_memory_max_mib)
      s.fail(s.node()["allocation_mib"], s.field("allocation_mib"),
             "must exceed cgroups.bg_memory_max_mib (study: the allocation is larger than the bg limit)");
    if (c.active_set_mib > c.allocation_mib)
      s.fail(s.node()["active_set_mib"], s.field("active_set_mib"), "must be <= allocation_mib");
    s.finish();
  }
  {
    YAML::Node r = top.get("regimes", true);
    if (!r.IsSequence() || r.size() == 0) top.fail(r, "regimes", "expected a non-empty list");
    std::set<std::string> names;
    for (std::size_t i = 0; i < r.size(); ++i) {
      Section s(r[i], "regimes[" + std::to_string(i) + "]", file);
      Regime g;
      g.name = s.scalar<std::string>("name");
      check_name(s, r[i]["name"], s.field("name"), g.name, "[a-z0-9-]{1,32}");
      if (!names.insert(g.name).second) s.fail(r[i]["name"], s.field("name"), "duplicate regime '" + g.name + "'");
      g.rate_mib_s = s.scalar<double>("rate_mib_s");
      if (!(g.rate_mib_s > 0)) s.fail(r[i]["rate_mib_s"], s.field("rate_mib_s"), "must be > 0");
      g.contents = s.scalar<std::string>("contents");
      if (g.contents != "structured" && g.contents != "random")
        s.fail(r[i]["contents"], s.field("contents"), "'" + g.contents + "' is not one of structured, random");
      s.finish();
      c.regimes.push_back(g);
    }
  }
  {
    Section s = top.child("canaries");
    c.canary_period_ms = static_cast<int>(positive_int(s, "period_ms", 100));
    c.compute_hot_mib = positive_int(s, "compute_hot_mib", 16);
    c.sqlite_db_path = s.scalar<std::string>("sqlite_db_path", std::string("/var/lib/harness/canary.db"));
    if (auto why = harness::case_::unsafe_path_reason(c.sqlite_db_path))
      s.fail(s.node()["sqlite_db_path"] ? s.node()["sqlite_db_path"] : s.node(), s.field("sqlite_db_path"), *why);
    c.sqlite_queries_per_request = static_cast<int>(positive_int(s, "sqlite_queries_per_request", 8));
    s.finish();
  }
  {
    Section s = top.child("trigger");
    c.trigger_window_ms = static_cast<int>(positive_int(s, "window_ms", 1000));
    c.trigger_min_increase_us = positive_int(s, "min_increase_us", 1000);
    c.trigger_consecutive_windows = static_cast<int>(positive_int(s, "consecutive_windows", 3));
    s.finish();
  }
  c.telemetry_period_ms = static_cast<int>(positive_int(top, "telemetry_period_ms", 1000));
  c.restoration_timeout_s = static_cast<int>(positive_int(top, "restoration_timeout_s", 120));
  load_arms(top, c);
  {
    Section s = top.child("design");
    c.design = s.scalar<std::string>("kind");
    design_vms(s, c);
    // The study's bounded-reclaim arm takes the design's dose; other arms carry their own.
    const bool needs_dose = std::any_of(c.arms.begin(), c.arms.end(), [](const Arm& a) {
      const auto* p = harness::case_::find_policy(a.policy);
      return a.study && std::any_of(p->params.begin(), p->params.end(),
                                    [](const harness::case_::ParamDef& d) { return d.name == "dose_mib"; });
    });
    auto dose = [&] {
      YAML::Node d = s.get("dose_mib", needs_dose);
      if (!d) return;
      if (d.IsMap()) {
        Section p(d, s.field("dose_mib"), file);
        c.dose_from_pilot = p.scalar<std::string>("from_pilot");
        if (c.dose_from_pilot.empty()) p.fail(d["from_pilot"], p.field("from_pilot"), "must name the pilot DB");
        accept_differences(p, c);
        p.finish();
      } else {
        c.dose_mib = positive_int(s, "dose_mib");
        // The study arm's rule for its dose (bounded-reclaim's settings_check: below the bg limit).
        if (auto why = design_dose_problem(c, static_cast<double>(*c.dose_mib)))
          s.fail(s.node()["dose_mib"], s.field("dose_mib"), *why);
      }
    };
    if (c.design == "ab-pairs") {
      // Pairs per (vm, regime, configuration): one case per variant each.
      c.repeats = static_cast<int>(positive_int(s, "repeats", 1));
      c.design_aa = s.scalar<bool>("aa", false);  // ab_same_kernel.hpp
      dose();
    } else if (c.design == "matched-triplets" || c.design == "matched-blocks") {
      const bool rep = s.has("repeats"), tpr = s.has("triplets_per_regime");
      if (rep && tpr)
        s.fail(s.node()["triplets_per_regime"], s.field("triplets_per_regime"),
               "give either triplets_per_regime (spread over design.vms, the study's design) or repeats (per "
               "(vm, regime) stratum), not both");
      if (!rep && !tpr)
        s.fail_missing({"triplets_per_regime", "repeats"}, "triplets_per_regime",
                       "missing (required): give triplets_per_regime (the study's design: 15) or repeats");
      if (tpr) c.triplets_per_regime = static_cast<int>(positive_int(s, "triplets_per_regime"));
      else c.repeats = static_cast<int>(positive_int(s, "repeats"));
      dose();
    } else if (c.design == "pilot") {
      YAML::Node d = s.get("doses_mib", true);
      if (!d.IsSequence() || d.size() == 0) s.fail(d, s.field("doses_mib"), "expected a non-empty list");
      for (std::size_t i = 0; i < d.size(); ++i) {
        const std::string f = s.field("doses_mib") + "[" + std::to_string(i) + "]";
        const auto v = s.as<std::int64_t>(d[i], f);
        if (v <= 0 || v >= c.bg_memory_max_mib)
          s.fail(d[i], f, "must be > 0 and below cgroups.bg_memory_max_mib");
        if (std::find(c.pilot_doses_mib.begin(), c.pilot_doses_mib.end(), v) != c.pilot_doses_mib.end())
          s.fail(d[i], f, "duplicate dose");
        c.pilot_doses_mib.push_back(v);
      }
      c.repeats = static_cast<int>(positive_int(s, "repeats", 1));
    } else {
      s.fail(s.node()["kind"], s.field("kind"),
             "'" + c.design + "' is not one of matched-triplets, matched-blocks, pilot, ab-pairs");
    }
    s.finish();
  }
  {
    Section s = top.child("runner", false);
    c.max_infra_retries = s.scalar<int>("max_infra_retries", 2);
    if (c.max_infra_retries < 0) s.fail(s.node()["max_infra_retries"], s.field("max_infra_retries"), "must be >= 0");
    c.case_timeout_s = s.scalar<int>("case_timeout_s", 0);
    if (c.case_timeout_s < 0) s.fail(s.node()["case_timeout_s"], s.field("case_timeout_s"), "must be >= 0");
    if (c.case_timeout_s == 0) c.case_timeout_s = (c.warmup_s + c.pressure_s + c.recovery_s) * 4 + 600;
    c.poll_interval_ms = static_cast<int>(positive_int(s, "poll_interval_ms", 1000));
    c.status_wait_ms = s.scalar<int>("status_wait_ms", 10000);
    if (c.status_wait_ms < 0 || c.status_wait_ms > 60000)
      s.fail(s.node()["status_wait_ms"], s.field("status_wait_ms"), "must lie in [0, 60000] (ms; 0 = plain polling)");
    s.finish();
  }
  {
    Section s = top.child("analysis", false);
    c.bootstrap_replicates = static_cast<int>(positive_int(s, "bootstrap_replicates", 10000));
    c.alpha = s.scalar<double>("alpha", 0.05);
    if (!(c.alpha > 0 && c.alpha < 1)) s.fail(s.node()["alpha"], s.field("alpha"), "must lie in (0, 1)");
    load_comparisons(s, c);
    // The analysis refuses fewer replicates than its percentile intervals need (analysis/verdict.hpp
    // minimum_replicates: 10 in each tail at 1 - alpha/m): refused here, before any case runs.
    if (c.design == "matched-triplets" || c.design == "matched-blocks") {
      const int m = static_cast<int>(c.comparisons.size());
      std::ostringstream alpha;
      alpha << c.alpha;
      if (const int min_b = analysis::minimum_replicates(c.alpha, m); c.bootstrap_replicates < min_b)
        s.fail(s.node()["bootstrap_replicates"] ? s.node()["bootstrap_replicates"] : s.node(),
               s.field("bootstrap_replicates"),
               std::to_string(c.bootstrap_replicates) + " is too small for " + std::to_string(m) +
                   " comparisons at alpha " + alpha.str() +
                   ": the analysis needs 10 replicates in each tail of every 1 - alpha/m interval "
                   "(alpha/(2 m) x B >= 10), at least " + std::to_string(min_b));
    }
    s.finish();
  }
  {
    Section s = top.child("eligibility", false);
    c.eligibility_max_duration_s = s.scalar<double>("max_duration_s", 1.0);
    c.eligibility_min_achieved_ratio = s.scalar<double>("min_achieved_ratio", 0.8);
    if (!(c.eligibility_max_duration_s > 0))
      s.fail(s.node()["max_duration_s"], s.field("max_duration_s"), "must be > 0");
    if (!(c.eligibility_min_achieved_ratio > 0 && c.eligibility_min_achieved_ratio <= 2))
      s.fail(s.node()["min_achieved_ratio"], s.field("min_achieved_ratio"), "must lie in (0, 2]");
    if (const auto v = s.optional_scalar<std::string>("restoration")) {
      const auto r = analysis::restoration_named(*v);
      if (!r) s.fail(s.at("restoration"), s.field("restoration"), "'" + *v + "' is not one of " + analysis::restoration_names());
      c.eligibility_reading.restoration = *r;
    }
    if (const auto v = s.optional_scalar<std::string>("eagain")) {
      const auto e = analysis::eagain_named(*v);
      if (!e) s.fail(s.at("eagain"), s.field("eagain"), "'" + *v + "' is not one of " + analysis::eagain_names());
      c.eligibility_reading.eagain = *e;
    }
    s.finish();
  }
  if (const std::string why = design_arms_problem(c); !why.empty())
    top.fail(top.node()["design"]["kind"], "design.kind", why);
  {
    YAML::Node n = top.get("assertions", false);
    if (n) {
      if (!n.IsSequence()) top.fail(n, "assertions", "expected a list");
      static const std::map<std::string, std::pair<bool, bool>> kinds{
          // kind -> (needs min, needs max)
          {"all_cases_completed", {false, false}},  {"reclaim_achieved_ratio", {true, false}},
          {"reclaim_duration_s", {false, true}},    {"trigger_within_s", {false, true}},
          {"restoration_clean", {false, false}},    {"no_foreground_oom", {false, false}},
          {"canary_p99_ms", {false, true}}};
      for (std::size_t i = 0; i < n.size(); ++i) {
        Section s(n[i], "assertions[" + std::to_string(i) + "]", file);
        Assertion a;
        a.line = static_cast<int>(n[i].Mark().line) + 1;
        a.kind = s.scalar<std::string>("kind");
        auto it = kinds.find(a.kind);
        if (it == kinds.end())
          s.fail(n[i]["kind"], s.field("kind"),
                 "'" + a.kind + "' is not one of all_cases_completed, reclaim_achieved_ratio, reclaim_duration_s, "
                                "trigger_within_s, restoration_clean, no_foreground_oom, canary_p99_ms");
        if (it->second.first) a.min = s.scalar<double>("min");
        if (it->second.second) a.max = s.scalar<double>("max");
        s.finish();
        c.assertions.push_back(a);
      }
    }
  }
  ab_variants(top, c);
  ab_regression(top, c);
  top.finish();
  // Commit pin (PROTOCOL.md): `any` only for smoke and CI campaigns.
  if (c.kind.empty()) c.kind = c.design == "pilot" ? "pilot" : "confirmatory";
  if (c.pinned_commit == "any" && !allows_any_commit(c.kind))
    top.fail(root["pinned_commit"], "pinned_commit",
             "'any' is accepted only for kind smoke or ci; this campaign is " + c.kind +
                 (root["kind"] ? "" : " (kind not given: " + c.kind + " by default)") +
                 ": pin the 40-hex commit of the harness build that will run it, or write 'build' for the commit of "
                 "the (clean) build that plans it");
  return c;
}

}  // namespace

Campaign parse_campaign(const std::string& text, const std::string& file) {
  try {
    return parse_campaign_text(text, file, std::filesystem::path(file).parent_path().string());
  } catch (const yaml::InputError& e) {
    throw CampaignError(e.what());
  }
}

Campaign parse_campaign_in(const std::string& text, const std::string& file, const std::optional<std::string>& base_dir) {
  Campaign c;
  try {
    c = parse_campaign_text(text, file, base_dir);
  } catch (const yaml::InputError& e) {
    throw CampaignError(e.what());
  }
  if (!c.dose_from_pilot.empty() && std::filesystem::path(c.dose_from_pilot).is_relative()) {
    if (!c.base_dir) throw CampaignError(file + ": field design.dose_mib.from_pilot: " + unknown_folder(c.dose_from_pilot));
    c.dose_from_pilot = (std::filesystem::path(*c.base_dir) / c.dose_from_pilot).lexically_normal().string();
  }
  return c;
}

Campaign load_campaign(const std::string& path) {
  std::string text;
  try {
    text = yaml::read_text(path);
  } catch (const yaml::InputError& e) {
    throw CampaignError(std::string(e.what()) + " (campaign file)");
  }
  return parse_campaign_in(text, path, std::filesystem::path(path).parent_path().string());
}

void resolve_build_pin(Campaign& c, const std::string& commit, bool dirty, bool preview) {
  if (c.pinned_commit != "build") return;
  if (!std::regex_match(commit, std::regex("[0-9a-f]{40}")))
    throw CampaignError(c.file + ": field pinned_commit: 'build' needs a harness built from a git checkout; this "
                        "build's commit is '" + commit + "'");
  if (dirty && !preview)
    throw CampaignError(c.file + ": field pinned_commit: 'build' needs a clean build; this harness (" + commit +
                        ") was built with uncommitted changes: commit them and rebuild");
  c.pinned_commit = commit;
}

}  // namespace harness::campaign
