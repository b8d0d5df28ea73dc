// Case spec parsing and validation (rules: harness/case/SPEC.md; defaults: the study).
#include "harness/case/spec/spec.hpp"

#include "harness/case/control/arm.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/kernel/size.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

namespace harness::case_ {

Checked check_arm_name(const std::string& name) {
  static const std::regex re("[a-z][a-z0-9-]{0,39}");
  if (!std::regex_match(name, re))
    return problem(fmt::format(
        "'{}' is not an arm name ([a-z][a-z0-9-]{{0,39}}: a lowercase letter, then up to 39 of a-z 0-9 -)",
        harness::json::excerpt(name)));
  return {};
}

SpecError::SpecError(std::string field, const std::string& message)
    : std::runtime_error(message), field_(std::move(field)) {}

const char* to_string(DelayedSwapfile v) { return v == DelayedSwapfile::Off ? "off" : "active"; }

bool valid_case_id(const std::string& id) {
  static const std::regex re("[A-Za-z0-9._-]{1,128}");
  return id != "." && id != ".." && std::regex_match(id, re);
}

namespace {

using harness::kernel::kMiB;

using json = nlohmann::json;

/// Reads fields of one JSON object, naming "<prefix>.<key>" in every error.
class Obj {
 public:
  Obj(const json& j, std::string prefix, const std::string& source)
      : j_(j), prefix_(std::move(prefix)), source_(source) {
    if (!j_.is_object()) fail(prefix_, "must be a JSON object");
  }

  /// Rejects keys not in `allowed` (SPEC.md: unknown fields are rejected); the key is quoted
  /// as an excerpt (a megabyte-long key gives a short error).
  void only(std::initializer_list<const char*> allowed) const {
    std::set<std::string> ok(allowed.begin(), allowed.end());
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!ok.count(it.key())) fail(path(harness::json::excerpt(it.key())), "unknown field");
  }

  bool has(const std::string& k) const { return j_.contains(k) && !j_.at(k).is_null(); }

  const json& at(const std::string& k) const {
    if (!j_.contains(k)) fail(path(k), "required field is missing");
    return j_.at(k);
  }

  std::string str(const std::string& k) const {
    const json& v = at(k);
    if (!v.is_string()) fail(path(k), "must be a string");
    auto s = v.get<std::string>();
    if (s.empty()) fail(path(k), "must not be empty");
    return s;
  }

  std::int64_t i64(const std::string& k) const {
    const json& v = at(k);
    if (!v.is_number_integer()) fail(path(k), "must be an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      fail(path(k), "is out of range");
    return v.get<std::int64_t>();
  }

  std::optional<std::int64_t> opt_i64(const std::string& k) const {
    if (!has(k)) return std::nullopt;
    return i64(k);
  }

  std::int64_t i64_or(const std::string& k, std::int64_t dflt) const { return has(k) ? i64(k) : dflt; }

  double num(const std::string& k) const {
    const json& v = at(k);
    if (!v.is_number()) fail(path(k), "must be a number");
    return v.get<double>();
  }

  Obj sub(const std::string& k) const { return Obj(at(k), path(k), source_); }

  std::string path(const std::string& k) const { return prefix_.empty() ? k : prefix_ + "." + k; }

  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    throw SpecError(field, fmt::format("{}: field '{}': {}", source_, field, msg));
  }

 private:
  const json& j_;
  std::string prefix_;
  const std::string& source_;
};

}  // namespace

Checked check_cgroup_parent(const std::string& name) {
  static const std::regex re("harness(-[A-Za-z0-9_-]{1,56})?");
  if (std::regex_match(name, re)) return {};
  return problem("must be 'harness' or 'harness-<suffix>' ([A-Za-z0-9_-]{1,56}): a new cgroup under the "
                 "cgroup2 root that only the harness creates, never an existing one such as system.slice, "
                 "user.slice or init.scope (the executor kills every process in the parent)");
}

namespace {

// parse_spec's steps, one per section of the spec (SPEC.md), in the order parse_spec checks
// them: the first rule a spec breaks is the one its error names.

/// The document, with the JSON reader's size and depth limits; a JSON error is a SpecError of field "".
json spec_document(const std::string& text, const std::string& source) {
  try {
    return harness::json::parse(text, source);  // size and depth limits before anything copies it
  } catch (const harness::json::Error& e) {
    throw SpecError("", e.what());
  }
}

/// The case's identity and arm: case_id .. pinned_commit (the top-level scalars).
void read_case_identity(const Obj& root, CaseSpec& s) {
  s.case_id = root.str("case_id");
  if (!valid_case_id(s.case_id)) root.fail("case_id", "must match [A-Za-z0-9._-]{1,128} and not be . or ..");
  s.campaign = root.str("campaign");
  s.vm = root.str("vm");
  s.regime = root.str("regime");
  s.repeat = root.i64("repeat");
  if (root.has("triplet_id")) s.triplet_id = root.str("triplet_id");

  s.configuration = root.str("configuration");
  if (auto why = check_arm_name(s.configuration); !why) root.fail("configuration", why.error().message);
  s.dose_bytes = root.opt_i64("dose_bytes");

  s.pinned_commit = root.str("pinned_commit");
  static const std::regex hex40("[0-9a-f]{40}");
  if (s.pinned_commit != "any" && !std::regex_match(s.pinned_commit, hex40))
    root.fail("pinned_commit", "must be a 40-hex commit or \"any\"");
}

/// vm_shape: vcpus in 1..1024, memory_mib in 64..16777216.
void read_vm_shape(const Obj& root, CaseSpec& s) {
  Obj o = root.sub("vm_shape");
  o.only({"vcpus", "memory_mib"});
  auto v = o.i64("vcpus"), m = o.i64("memory_mib");
  if (v < 1 || v > 1024) o.fail(o.path("vcpus"), "must be in 1..1024");
  if (m < 64 || m > (1 << 24)) o.fail(o.path("memory_mib"), "must be in 64..16777216");
  s.vm_vcpus = static_cast<int>(v);
  s.vm_memory_mib = static_cast<int>(m);
}

/// phases_s: warmup, pressure, recovery, each in 1..86400 s.
PhasesSpec read_phases(const Obj& root) {
  Obj o = root.sub("phases_s");
  o.only({"warmup", "pressure", "recovery"});
  PhasesSpec ph;
  ph.warmup_s = o.i64("warmup");
  ph.pressure_s = o.i64("pressure");
  ph.recovery_s = o.i64("recovery");
  for (auto [k, v] : {std::pair{"warmup", ph.warmup_s}, {"pressure", ph.pressure_s}, {"recovery", ph.recovery_s}})
    if (v <= 0 || v > 86400) o.fail(o.path(k), fmt::format("must be in 1..86400 s, got {}", v));
  return ph;
}

/// cgroups: a harness-owned parent, bg's memory.max (>= 4096 bytes, or null: no limit) and the optional limits (>= 0 or null).
CgroupsSpec read_cgroups(const Obj& root) {
  Obj o = root.sub("cgroups");
  o.only({"parent", "bg_memory_max_bytes", "bg_memory_high_bytes", "fg_memory_max_bytes", "fg_memory_low_bytes"});
  CgroupsSpec c;
  c.parent = o.str("parent");
  if (auto why = check_cgroup_parent(c.parent); !why) o.fail(o.path("parent"), why.error().message);
  o.at("bg_memory_max_bytes");  // required; null = no limit
  c.bg_memory_max_bytes = o.opt_i64("bg_memory_max_bytes");
  if (c.bg_memory_max_bytes && *c.bg_memory_max_bytes < 4096)
    o.fail(o.path("bg_memory_max_bytes"), "must be >= 4096 bytes or null (no limit)");
  c.bg_memory_high_bytes = o.opt_i64("bg_memory_high_bytes");
  c.fg_memory_max_bytes = o.opt_i64("fg_memory_max_bytes");
  c.fg_memory_low_bytes = o.opt_i64("fg_memory_low_bytes");
  for (auto [k, v] : {std::pair{"bg_memory_high_bytes", c.bg_memory_high_bytes},
                      {"fg_memory_max_bytes", c.fg_memory_max_bytes},
                      {"fg_memory_low_bytes", c.fg_memory_low_bytes}})
    if (v && *v < 0) o.fail(o.path(k), "must be >= 0 bytes or null");
  return c;
}

/// backend: zram (size, compressor, priority), the swapfile (safe path, lower priority), delayed_swapfile.
BackendSpec read_backend(const Obj& root) {
  Obj o = root.sub("backend");
  o.only({"zram_disksize_bytes", "zram_algorithm", "zram_priority", "swapfile_path", "swapfile_priority",
          "delayed_swapfile"});
  BackendSpec b;
  if (o.has("delayed_swapfile")) {
    const auto v = o.str("delayed_swapfile");
    if (v == "off") b.delayed_swapfile = DelayedSwapfile::Off;
    else if (v != "active")
      o.fail(o.path("delayed_swapfile"), "'" + harness::json::excerpt(v) + "' is not one of active, off");
  }
  b.zram_disksize_bytes = o.i64("zram_disksize_bytes");
  if (b.zram_disksize_bytes < kMiB) o.fail(o.path("zram_disksize_bytes"), "must be >= 1 MiB");
  b.zram_algorithm = o.str("zram_algorithm");
  static const std::regex alg("[a-z0-9-]{1,32}");
  if (!std::regex_match(b.zram_algorithm, alg))
    o.fail(o.path("zram_algorithm"), "must be a compressor name such as lzo-rle, lz4, zstd");
  auto zp = o.i64("zram_priority"), sp = o.i64("swapfile_priority");
  if (zp < 0 || zp > 32767) o.fail(o.path("zram_priority"), "must be in 0..32767 (swapon(2))");
  if (sp < 0 || sp > 32767) o.fail(o.path("swapfile_priority"), "must be in 0..32767 (swapon(2))");
  if (sp >= zp)
    o.fail(o.path("swapfile_priority"), "must be lower than zram_priority (the swapfile is the low-priority spill)");
  b.zram_priority = static_cast<int>(zp);
  b.swapfile_priority = static_cast<int>(sp);
  b.swapfile_path = o.str("swapfile_path");
  if (auto why = check_safe_path(b.swapfile_path); !why) o.fail(o.path("swapfile_path"), why.error().message);
  return b;
}

/// pressure: pressure-gen's allocation (whole MiB, above bg's memory.max; without one, below
/// the VM's memory with part of it outside the active set), rate, active set, contents, seed.
PressureSpec read_pressure(const Obj& root, const CgroupsSpec& cgroups, int vm_memory_mib) {
  Obj o = root.sub("pressure");
  o.only({"allocation_bytes", "rate_mib_s", "active_set_bytes", "active_set_slide_mib_s", "contents", "seed"});
  PressureSpec p;
  p.allocation_bytes = o.i64("allocation_bytes");
  p.rate_mib_s = o.num("rate_mib_s");
  p.active_set_bytes = o.i64("active_set_bytes");
  p.active_set_slide_mib_s = o.has("active_set_slide_mib_s") ? o.num("active_set_slide_mib_s") : kDefaultActiveSetSlideMibS;
  if (!(p.active_set_slide_mib_s >= 0) || p.active_set_slide_mib_s > 1e5)
    o.fail(o.path("active_set_slide_mib_s"), "must be in 0..100000 MiB/s");
  p.contents = o.str("contents");
  auto seed = o.i64("seed");
  if (seed < 0) o.fail(o.path("seed"), "must be >= 0");
  p.seed = static_cast<std::uint64_t>(seed);
  if (p.allocation_bytes <= 0 || p.allocation_bytes % kMiB)
    o.fail(o.path("allocation_bytes"), "must be a positive whole number of MiB (pressure-gen takes MiB)");
  if (p.active_set_bytes <= 0 || p.active_set_bytes % kMiB)
    o.fail(o.path("active_set_bytes"), "must be a positive whole number of MiB");
  if (!(p.rate_mib_s > 0) || p.rate_mib_s > 1e6) o.fail(o.path("rate_mib_s"), "must be > 0 MiB/s");
  if (p.contents != "structured" && p.contents != "random") o.fail(o.path("contents"), "must be structured or random");
  if (cgroups.bg_memory_max_bytes && p.allocation_bytes <= *cgroups.bg_memory_max_bytes)
    o.fail(o.path("allocation_bytes"), fmt::format("must exceed cgroups.bg_memory_max_bytes ({}) (study: the "
                                                   "allocation is larger than the bg limit)",
                                                   *cgroups.bg_memory_max_bytes));
  if (p.active_set_bytes > p.allocation_bytes) o.fail(o.path("active_set_bytes"), "must be <= pressure.allocation_bytes");
  // No bg limit (ours: a cold-memory regime): the allocation stays resident, so it must fit in
  // the VM, and the part outside the active set is what goes cold.
  if (!cgroups.bg_memory_max_bytes && p.allocation_bytes >= static_cast<std::int64_t>(vm_memory_mib) * kMiB)
    o.fail(o.path("allocation_bytes"), fmt::format("must be below vm_shape.memory_mib ({} MiB) when cgroups.bg_memory_max_bytes "
                                                   "is null: without a bg limit the whole allocation stays resident",
                                                   vm_memory_mib));
  if (!cgroups.bg_memory_max_bytes && p.active_set_bytes >= p.allocation_bytes)
    o.fail(o.path("active_set_bytes"), "must be below pressure.allocation_bytes when cgroups.bg_memory_max_bytes is null: "
                                       "without a bg limit only the memory outside the active set is cold");
  return p;
}

/// canaries: period, canary-compute's hot region (whole MiB), the SQLite canary (safe path, queries, offset), seed.
CanariesSpec read_canaries(const Obj& root) {
  Obj o = root.sub("canaries");
  o.only({"period_ms", "compute_hot_bytes", "sqlite_db_path", "sqlite_queries_per_request", "sqlite_offset_ms",
          "seed"});
  CanariesSpec c;
  auto p = o.i64("period_ms");
  if (p < 1 || p > 60000) o.fail(o.path("period_ms"), "must be in 1..60000 ms");
  c.period_ms = static_cast<int>(p);
  c.compute_hot_bytes = o.i64("compute_hot_bytes");
  if (c.compute_hot_bytes <= 0 || c.compute_hot_bytes % kMiB)
    o.fail(o.path("compute_hot_bytes"), "must be a positive whole number of MiB (canary-compute takes MiB)");
  c.sqlite_db_path = o.str("sqlite_db_path");
  if (auto why = check_safe_path(c.sqlite_db_path); !why) o.fail(o.path("sqlite_db_path"), why.error().message);
  auto q = o.i64("sqlite_queries_per_request");
  if (q < 1 || q > 100000) o.fail(o.path("sqlite_queries_per_request"), "must be in 1..100000");
  c.sqlite_queries_per_request = static_cast<int>(q);
  auto so = o.i64_or("sqlite_offset_ms", 50);
  if (so < 0 || so >= p) o.fail(o.path("sqlite_offset_ms"), fmt::format("must be in 0..{} ms (below period_ms)", p - 1));
  c.sqlite_offset_ms = static_cast<int>(so);
  auto seed = o.i64("seed");
  if (seed < 0) o.fail(o.path("seed"), "must be >= 0");
  c.seed = static_cast<std::uint64_t>(seed);
  return c;
}

/// trigger (optional, each key with the study's default: 1000 ms, 1000 us, 3 windows).
TriggerSpec read_trigger(const Obj& root) {
  if (!root.has("trigger")) return TriggerSpec{};
  Obj o = root.sub("trigger");
  o.only({"window_ms", "min_increase_us", "consecutive_windows"});
  auto w = o.i64_or("window_ms", 1000), m = o.i64_or("min_increase_us", 1000), c = o.i64_or("consecutive_windows", 3);
  if (w < 10 || w > 600000) o.fail(o.path("window_ms"), "must be in 10..600000 ms");
  if (m < 1) o.fail(o.path("min_increase_us"), "must be > 0 us");
  if (c < 1 || c > 10000) o.fail(o.path("consecutive_windows"), "must be in 1..10000");
  return {static_cast<int>(w), m, static_cast<int>(c)};
}

/// telemetry_period_ms (= trigger.window_ms), telemetry_offset_ms (below the period) and
/// restoration_timeout_s (1..3600 s); reads s.trigger.
void read_timing(const Obj& root, CaseSpec& s) {
  s.telemetry_period_ms = static_cast<int>(root.i64_or("telemetry_period_ms", s.trigger.window_ms));
  if (s.telemetry_period_ms != s.trigger.window_ms)
    root.fail("telemetry_period_ms", fmt::format("must equal trigger.window_ms ({}): the controller uses the "
                                                 "telemetry samples (docs/DESIGN.md \"Telemetry at 1 Hz\")",
                                                 s.trigger.window_ms));
  auto to = root.i64_or("telemetry_offset_ms", 25);
  if (to < 0 || to >= s.telemetry_period_ms)
    root.fail("telemetry_offset_ms",
              fmt::format("must be in 0..{} ms (below telemetry_period_ms)", s.telemetry_period_ms - 1));
  s.telemetry_offset_ms = static_cast<int>(to);
  auto rt = root.i64_or("restoration_timeout_s", 120);
  if (rt < 1 || rt > 3600) root.fail("restoration_timeout_s", "must be in 1..3600 s");
  s.restoration_timeout_s = static_cast<int>(rt);
}

/// variant.sysctls or variant.sysfs (`sysfs`): {name: value}, each name and value checked (variant.hpp).
std::vector<std::pair<std::string, std::string>> read_variant_knobs(const Obj& o, const char* key, bool sysfs) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!o.has(key)) return out;
  const json& m = o.at(key);
  if (!m.is_object()) o.fail(o.path(key), "must be a JSON object {name: value}");
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string f = o.path(key) + "." + harness::json::excerpt(it.key());
    if (sysfs) {
      if (auto why = check_sysfs_path(it.key()); !why) o.fail(f, why.error().message);
    } else if (auto why = check_sysctl_name(it.key()); !why) {
      o.fail(f, why.error().message);
    }
    if (!it.value().is_string() || !valid_variant_value(it.value().get<std::string>()))
      o.fail(f, "value must be a string matching [A-Za-z0-9 _.,:=+-]{1,64}");
    out.emplace_back(it.key(), it.value().get<std::string>());
  }
  return out;
}

/// variant (A/B campaigns only, SPEC.md "variant"): name, pair, knobs, kernel command line and image.
std::optional<VariantSpec> read_variant(const Obj& root) {
  if (!root.has("variant")) return std::nullopt;
  Obj o = root.sub("variant");
  o.only({"name", "pair_id", "sysctls", "sysfs", "cmdline", "kernel_release", "kernel_image_dir"});
  VariantSpec v;
  v.name = o.str("name");
  static const std::regex vname("[A-Za-z0-9_-]{1,32}");
  if (!std::regex_match(v.name, vname)) o.fail(o.path("name"), "must match [A-Za-z0-9_-]{1,32}");
  v.pair_id = o.str("pair_id");
  v.sysctls = read_variant_knobs(o, "sysctls", false);
  v.sysfs = read_variant_knobs(o, "sysfs", true);
  if (o.has("cmdline")) {
    const json& a = o.at("cmdline");
    if (!a.is_array()) o.fail(o.path("cmdline"), "must be an array of strings");
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string() || !valid_cmdline_param(a[i].get<std::string>()))
        o.fail(fmt::format("{}[{}]", o.path("cmdline"), i), "must be a string matching [A-Za-z0-9_.,=:+-]{1,256}");
      v.cmdline.push_back(a[i].get<std::string>());
    }
  }
  if (o.has("kernel_release")) v.kernel_release = o.str("kernel_release");
  if (o.has("kernel_image_dir")) v.kernel_image_dir = o.str("kernel_image_dir");
  return v;
}

/// The arm's policy (arm.hpp resolve_arm): named in the spec (`policy`, from `doc`), or the
/// study arm of that name; its parameters checked against the case's own settings.
void read_policy(const Obj& root, const json& doc, CaseSpec& s) {
  if (s.dose_bytes && *s.dose_bytes <= 0) root.fail("dose_bytes", "must be > 0 bytes or null");
  bool takes_dose = false;
  try {
    ResolvedArm arm = resolve_arm(s.configuration, root.has("policy") ? &doc.at("policy") : nullptr, s.dose_bytes);
    s.policy = std::move(arm.policy);
    s.policy_params = std::move(arm.params);
    s.policy_in_spec = arm.in_spec;
    takes_dose = arm.takes_dose;
  } catch (const SpecError& e) {
    root.fail(e.field(), e.what());
  }
  // The study's bounded-reclaim (arm.hpp takes_design_dose): its dose (dose_bytes) below the bg
  // limit (none: nothing to check).
  if (takes_dose && s.cgroups.bg_memory_max_bytes && *s.dose_bytes >= *s.cgroups.bg_memory_max_bytes)
    root.fail("dose_bytes", fmt::format("{} must be smaller than cgroups.bg_memory_max_bytes ({})", *s.dose_bytes,
                                        *s.cgroups.bg_memory_max_bytes));
  // A named policy's parameters against this case's own settings (policy.hpp settings_check), the
  // rules the campaign loader applies: a spec written by hand or by another tool meets them too.
  if (s.policy_in_spec) {
    ArmSettings as;
    if (s.cgroups.bg_memory_max_bytes) as.bg_memory_max_mib = static_cast<double>(*s.cgroups.bg_memory_max_bytes) / kMiB;
    if (s.cgroups.bg_memory_high_bytes) as.bg_memory_high_mib = static_cast<double>(*s.cgroups.bg_memory_high_bytes) / kMiB;
    as.warmup_s = static_cast<double>(s.phases.warmup_s);
    as.pressure_s = static_cast<double>(s.phases.pressure_s);
    as.recovery_s = static_cast<double>(s.phases.recovery_s);
    as.telemetry_period_ms = s.telemetry_period_ms;
    if (const auto e = settings_problem(*find_policy(s.policy), s.policy_params, as))
      root.fail(e->field().empty() ? "policy.params" : "policy.params." + e->field(), e->what());
  }
}

}  // namespace

CaseSpec parse_spec(const std::string& text, const std::string& source) {
  const json doc = spec_document(text, source);
  Obj root(doc, "", source);
  root.only({"case_id", "campaign", "vm", "regime", "repeat", "triplet_id", "configuration",
             "dose_bytes", "pinned_commit", "vm_shape", "phases_s", "cgroups", "backend",
             "pressure", "canaries", "trigger", "telemetry_period_ms", "telemetry_offset_ms",
             "restoration_timeout_s", "variant", "policy"});
  CaseSpec s;
  s.raw = doc;
  read_case_identity(root, s);
  read_vm_shape(root, s);
  s.phases = read_phases(root);
  s.cgroups = read_cgroups(root);
  s.backend = read_backend(root);
  s.pressure = read_pressure(root, s.cgroups, s.vm_memory_mib);
  s.canaries = read_canaries(root);
  s.trigger = read_trigger(root);
  read_timing(root, s);
  s.variant = read_variant(root);
  read_policy(root, doc, s);
  return s;
}

CaseSpec load_spec_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError("", fmt::format("{}: cannot read spec file", path));
  // Read at most one byte more than the JSON size limit: a larger file is refused unread.
  const std::size_t limit = harness::json::kDefaultLimits.max_bytes;
  std::string text;
  char buf[65536];
  while (text.size() <= limit && in.read(buf, sizeof buf).gcount() > 0)
    text.append(buf, static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw SpecError("", fmt::format("{}: read error", path));
  return parse_spec(text, path);
}

}  // namespace harness::case_
