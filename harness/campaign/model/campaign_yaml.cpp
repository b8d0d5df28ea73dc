// Campaign YAML loader: strict (unknown keys rejected), every error with file:line:col
// and the dotted field path (the shared reader, harness/yaml/strict_yaml.hpp). The
// `provider:` block is parsed by its engine (harness/pool/engine.hpp), the other sections by
// the readers of campaign_yaml_sections.hpp. Rules come from the study, docs/PROTOCOL.md and
// case/SPEC.md.
#include "harness/campaign/model/campaign.hpp"

#include "harness/campaign/model/campaign_arms.hpp"
#include "harness/campaign/model/campaign_yaml_sections.hpp"
#include "harness/text/join.hpp"
#include "harness/yaml/strict_yaml.hpp"

#include <filesystem>
#include <regex>

namespace harness::campaign {

namespace {

using yaml::Section;
using yaml::check_name;
using yaml::positive_int;

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

/// name, kind, seed and pinned_commit (the commit pin's own rule: commit_pin_rule).
void read_identity(Section& top, Campaign& c) {
  const YAML::Node& root = top.node();
  c.name = top.scalar<std::string>("name");
  check_name(top, root["name"], "name", c.name, "[A-Za-z0-9._-]{1,48}");
  c.kind = top.scalar<std::string>("kind", std::string());
  if (!c.kind.empty() && c.kind != "smoke" && c.kind != "ci" && c.kind != "pilot" && c.kind != "confirmatory")
    top.fail(root["kind"], "kind", "'" + c.kind + "' is not one of smoke, ci, pilot, confirmatory");
  c.seed = top.scalar<std::uint64_t>("seed");
  c.pinned_commit = top.scalar<std::string>("pinned_commit");
  if (c.pinned_commit != "any" && c.pinned_commit != "build") check_name(top, root["pinned_commit"], "pinned_commit", c.pinned_commit, "[0-9a-f]{40}");
}

/// runner: {max_infra_retries, case_timeout_s (0: from the phases), poll_interval_ms,
/// status_wait_ms}. Call after the phases are read.
void read_runner(Section& top, Campaign& c) {
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

/// The kind by default (pilot for the pilot design, else confirmatory) and the commit pin
/// (PROTOCOL.md): `any` only for smoke and CI campaigns. Call last.
void commit_pin_rule(const Section& top, Campaign& c) {
  const YAML::Node& root = top.node();
  if (c.kind.empty()) c.kind = c.design == "pilot" ? "pilot" : "confirmatory";
  if (c.pinned_commit == "any" && !allows_any_commit(c.kind))
    top.fail(root["pinned_commit"], "pinned_commit",
             "'any' is accepted only for kind smoke or ci; this campaign is " + c.kind +
                 (root["kind"] ? "" : " (kind not given: " + c.kind + " by default)") +
                 ": pin the 40-hex commit of the harness build that will run it, or write 'build' for the commit of "
                 "the (clean) build that plans it");
}

/// Parses and checks a whole campaign file, section by section (campaign_yaml_sections.hpp);
/// `base_dir`: the folder relative paths are read from (nullopt: not known).
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
  read_identity(top, c);
  read_vm_shape(top, c);
  provider_block(top, c);
  read_phases(top, c);
  read_cgroups(top, c);
  read_backend(top, c);
  read_pressure(top, c);
  read_regimes(top, c);
  read_canaries(top, c);
  read_trigger(top, c);
  c.telemetry_period_ms = static_cast<int>(positive_int(top, "telemetry_period_ms", 1000));
  c.restoration_timeout_s = static_cast<int>(positive_int(top, "restoration_timeout_s", 120));
  load_arms(top, c);
  read_design(top, c);
  read_runner(top, c);
  read_analysis(top, c);
  read_eligibility(top, c);
  if (const auto why = check_design_arms(c); !why)
    top.fail(top.node()["design"]["kind"], "design.kind", why.error().message);
  read_assertions(top, c);
  read_ab_variants(top, c);
  read_ab_regression(top, c);
  top.finish();
  commit_pin_rule(top, c);
  return c;
}

}  // namespace

std::string unknown_folder(const std::string& path) {
  return "'" + path + "' is relative to the campaign file's folder, which this DB does not record (planned by an "
         "earlier harness from a relative path): give the campaign FILE (`harness run FILE DB`)";
}

bool allows_any_commit(const std::string& kind) { return kind == "smoke" || kind == "ci"; }

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
