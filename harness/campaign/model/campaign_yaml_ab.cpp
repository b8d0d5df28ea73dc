// The campaign sections of an A/B campaign (design ab-pairs; campaign_yaml_sections.hpp):
// variants (what differs between baseline and candidate: sysctls, sysfs, kernel cmdline,
// kernel image) and regression (alpha, tolerances). Rules: docs/CAMPAIGN.md "variants",
// "regression"; case/SPEC.md "variant".
#include "harness/campaign/model/campaign_yaml_sections.hpp"

#include "analysis/compare/regression.hpp"
#include "harness/case/spec/variant.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/text/join.hpp"

#include <algorithm>
#include <filesystem>

namespace harness::campaign {

namespace {

using yaml::Section;
using yaml::key_node;

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
      if (auto why = harness::case_::check_sysfs_path(k); !why)
        v.fail(kv.first, kf, "'" + k + "' " + why.error().message);
    } else if (auto why = harness::case_::check_sysctl_name(k); !why) {
      v.fail(kv.first, kf, "'" + k + "' " + why.error().message);
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

/// variants.<name>.cmdline (optional): a list of kernel parameters, for an engine that boots
/// the guest with them.
void variant_cmdline(Section& v, const Campaign& c, Variant& x) {
  YAML::Node cl = v.get("cmdline", false);
  if (!cl || cl.IsNull()) return;
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

/// The kernel_release of the image folder `p`'s manifest.json ("" when it names none);
/// fails at `at` when the manifest is absent or unreadable.
std::string image_kernel_release(const Section& k, const YAML::Node& at, const std::filesystem::path& p) {
  const auto mf = p / "manifest.json";
  if (!std::filesystem::exists(mf))
    k.fail(at, k.field("image_dir"),
           "'" + p.string() + "' holds no manifest.json (build it with `harness vm image --kernel ... --out DIR`)");
  try {
    const auto m = harness::json::parse_file(mf.string());
    return m.is_object() && m.contains("kernel_release") && m["kernel_release"].is_string()
               ? m["kernel_release"].get<std::string>()
               : "";
  } catch (const std::exception& e) {
    k.fail(at, k.field("image_dir"), mf.string() + ": " + e.what());
  }
}

/// variants.<name>.kernel (optional): {image_dir}, a folder `harness vm image --out DIR` built
/// (relative to the campaign file's folder), for an engine that boots the guest with it.
void variant_kernel_image(Section& v, const Campaign& c, Variant& x) {
  if (!v.has("kernel")) return;
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
  x.kernel_release = image_kernel_release(k, at, p);
  if (x.kernel_release.empty()) k.fail(at, k.field("image_dir"), (p / "manifest.json").string() + " names no kernel_release");
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

/// variants.<name> (baseline or candidate): {sysctls, sysfs, cmdline, kernel}, all optional.
Variant read_variant(Section& vs, const YAML::Node& vn, const char* name, const Campaign& c) {
  YAML::Node n = vs.get(name, true);
  Section v(n.IsNull() ? YAML::Node(YAML::NodeType::Map) : n, vs.field(name), vs.file());
  Variant x;
  x.name = name;
  x.line = static_cast<int>(key_node(vn, name).Mark().line) + 1;
  x.sysctls = variant_knobs(v, "sysctls", false);
  x.sysfs = variant_knobs(v, "sysfs", true);
  variant_cmdline(v, c, x);
  variant_kernel_image(v, c, x);
  v.finish();
  return x;
}

/// regression.tolerances.<metric>: {max_ratio, min_ratio} (at least one; each > 0, min below max).
Tolerance read_tolerance(const Section& r, const std::string& tolerances_field,
                         const std::pair<YAML::Node, YAML::Node>& kv) {
  Tolerance t;
  t.metric = kv.first.Scalar();
  t.line = static_cast<int>(kv.first.Mark().line) + 1;
  const std::string f = tolerances_field + "." + t.metric;
  bool known = false;
  for (const auto& m : analysis::regression_metrics()) known = known || t.metric == m.name;
  if (!known) {
    const std::string names = text::join(analysis::regression_metrics(), ", ", [](const auto& m) { return m.name; });
    r.fail(kv.first, f, "'" + t.metric + "' is not a regression metric (" + names + ")");
  }
  Section ts(kv.second, f, r.file());
  t.max_ratio = ts.optional_scalar<double>("max_ratio");
  t.min_ratio = ts.optional_scalar<double>("min_ratio");
  ts.finish();  // a misspelt key is named (with the key meant) before "give max_ratio, min_ratio or both"
  if (!t.max_ratio && !t.min_ratio) ts.fail(kv.second, f, "give max_ratio, min_ratio or both");
  if (t.max_ratio && !(*t.max_ratio > 0)) ts.fail(kv.second["max_ratio"], ts.field("max_ratio"), "must be > 0");
  if (t.min_ratio && !(*t.min_ratio > 0)) ts.fail(kv.second["min_ratio"], ts.field("min_ratio"), "must be > 0");
  if (t.max_ratio && t.min_ratio && !(*t.min_ratio < *t.max_ratio))
    ts.fail(kv.second["min_ratio"], ts.field("min_ratio"), "must be below max_ratio");
  return t;
}

}  // namespace

void read_ab_variants(Section& top, Campaign& c) {
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
  for (const char* name : {"baseline", "candidate"}) c.variants.push_back(read_variant(vs, vn, name, c));
  vs.finish();
  bool boots = false;
  for (const auto& x : c.variants) boots = boots || !x.cmdline.empty() || !x.kernel_image_dir.empty();
  if (boots && !c.engine->fresh_guest_per_case)
    top.fail(key_node(top.node(), "variants"), "variants",
             "a variant with cmdline or kernel needs provider.fresh_guest_per_case: true (each case boots its "
             "variant's guest)");
}

void read_ab_regression(Section& top, Campaign& c) {
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
    for (const auto& kv : tn) c.tolerances.push_back(read_tolerance(r, r.field("tolerances"), kv));
  }
  r.finish();
}

}  // namespace harness::campaign
