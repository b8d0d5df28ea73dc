#pragma once
// Reclaim policies: what an arm of a campaign does to the case's bg cgroup (docs/DESIGN.md
// "Configurations"; harness/case/README.md "Adding a policy"). One file per policy under
// harness/case/policies/, each defining `PolicyInfo policy_<file stem>()`; CMake generates
// the list of those functions from the folder (policy_list.cpp.in), so a new policy is one
// new file and no list is kept by hand.
//
// A policy says
//   - what the backend looks like at the start of the case (zram swapped on, or prepared
//     and left off),
//   - what it does on every telemetry tick of the pressure and recovery phases (on_tick),
//   - what it does when the study's PSI trigger fires (on_trigger, once per case; or a
//     no-action note: the window is a `would_trigger` event and nothing happens),
//   - what it adds to the record once the schedule is over (finish: its events, rows and
//     outcome_json keys).
// Hooks run on the controller's tick and must not block: a memory.reclaim write runs on its
// own thread (reclaim_action.hpp), as the study's 96 MiB write always has.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/host/backend.hpp"
#include "harness/case/run/bundle.hpp"
#include "harness/case/run/case_outcome.hpp"
#include "harness/case/run/telemetry_sample.hpp"
#include "harness/error/expected.hpp"
#include "harness/kernel/cgroup.hpp"

namespace harness::case_ {

struct CaseSpec;

/// What a policy may use while the case runs.
struct ActionContext {
  const CaseSpec& spec;
  Backend& backend;
  harness::kernel::Cgroup bg;                     ///< the case's bg cgroup
  const std::vector<TelemetrySample>& telemetry;  ///< the samples so far (this tick's is the last)
  std::int64_t page_size_bytes = 4096;
  std::int64_t reclaim_settle_ns = 2'200'000'000;  ///< ExecutorOptions::reclaim_settle_ns
};

/// One tick as a policy sees it (on_tick): every sample whose phase is pressure or recovery,
/// after the trigger predicate has judged it.
struct TickInput {
  const TelemetrySample& sample;      ///< this tick's sample (also ActionContext::telemetry.back())
  std::int64_t pressure_start_ns = 0; ///< CLOCK_MONOTONIC ns of the tick that opened pressure
  std::int64_t pressure_end_ns = 0;   ///< ... and of the tick that closes it
  /// The study's trigger: the tick at which it fired (or would have fired, for a no-action
  /// policy), if it has; `fired_now` when that tick is this one.
  std::optional<std::int64_t> trigger_t_ns;
  bool fired_now = false;
};

class Policy {
 public:
  virtual ~Policy() = default;

  /// The backend at the start of the case (Backend::prepare).
  virtual ZramAtStart zram_at_start() const = 0;

  /// nullopt (the default): the firing window is a `trigger` event and on_trigger() runs.
  /// A note: the policy takes no action at the trigger; the window is a `would_trigger`
  /// event whose detail carries the note, and outcome_json.trigger.kind is "would_trigger".
  virtual std::optional<std::string> no_action_note() const { return std::nullopt; }

  /// The trigger fired at tick `t_ns` (its `trigger` event is already in `events`); runs
  /// once, on the controller's tick, before on_tick of the same tick.
  virtual void on_trigger(std::int64_t /*t_ns*/, ActionContext& /*ctx*/, std::vector<ControllerEvent>& /*events*/) {}

  /// Every tick of the pressure and recovery phases (1 Hz at the study's telemetry period).
  virtual void on_tick(const TickInput& /*tick*/, ActionContext& /*ctx*/, std::vector<ControllerEvent>& /*events*/) {}

  /// After the schedule, once the workloads are reaped and before restoration: adds the
  /// policy's events and rows to `bundle` and its keys to `outcome`.
  virtual void finish(ActionContext& /*ctx*/, CaseBundle& /*bundle*/, CaseOutcome& /*outcome*/) {}
};

/// A policy's parameters that do not fit its ParamDefs, or each other, or the campaign
/// (PolicyInfo::settings_check). field() names the parameter: "dose_mib", or a path inside a
/// Json one ("rules[1].do", "rules[0].do.reclaim.mib"); "" for the whole object. what() is
/// "<field>: <why>" (or the whole message when field() is "", or when it names its subject in
/// its own words: "'x' is not a parameter of ..."). why(): what() without that "<field>: ", for
/// a caller that names the field itself (a campaign's "FILE:LINE:COL: field arms[1].params.F: ").
class ParamError : public std::runtime_error {
 public:
  ParamError(std::string field, const std::string& message);
  const std::string& field() const { return field_; }
  std::string why() const;

 private:
  std::string field_;
};

/// ParamError(field, "<field>: <why>"): the form of every parameter error.
ParamError param_error(const std::string& field, const std::string& why);

/// The campaign settings an arm's parameters are checked against (PolicyInfo::settings_check):
/// what every case of the arm runs under. Units are in the names.
struct ArmSettings {
  /// bg memory.max the cases run under, MiB (nullopt: none, or not known: nothing to check against).
  std::optional<double> bg_memory_max_mib;
  /// Where that limit is written, for messages: "cgroups.bg_memory_max_mib" (the campaign's, or
  /// a spec's cgroups.bg_memory_max_bytes) or "regimes[i].bg_memory_max_mib" (a regime's own).
  std::string bg_memory_max_field = "cgroups.bg_memory_max_mib";
  std::optional<double> bg_memory_high_mib;  ///< cgroups.bg_memory_high_mib (nullopt: not set)
  double warmup_s = 0, pressure_s = 0, recovery_s = 0;  ///< phases_s
  double telemetry_period_ms = 1000;         ///< telemetry_period_ms: one tick, the finest a policy decides
};

/// Checks validated parameters (defaults filled) against each other and `settings`: nullopt
/// when they fit, else the ParamError naming the parameter at fault.
using SettingsCheck = std::function<std::optional<ParamError>(const nlohmann::json& params, const ArmSettings& settings)>;

/// The settings rules several policies and rule blocks share (each nullopt when it holds):
/// `field` asks `mib` MiB of bg memory.reclaim: more than the bg limit (s.bg_memory_max_mib,
/// named by s.bg_memory_max_field; with `or_equal`, as much as it too: the study's dose is
/// below the limit, case/SPEC.md) is an error, since bg never holds more than its memory.max to
/// reclaim. No limit (nullopt): nothing to check.
std::optional<ParamError> above_bg_limit(const std::string& field, double mib, const ArmSettings& s, bool or_equal = false);
/// `field` (written `shown`, e.g. "6 s") is a period of `seconds`: longer than the pressure
/// phase (with `or_equal`, as long as it too) is an error, since no decision paced by it would
/// fall in the pressure phase, the phase the study's outcome is measured in.
std::optional<ParamError> outlasts_pressure(const std::string& field, const std::string& shown, double seconds,
                                            const ArmSettings& s, bool or_equal);
/// `field` (written `shown`) is a decision period of `seconds`: shorter than one telemetry tick
/// is an error, since policies decide on ticks (it would silently be one tick).
std::optional<ParamError> under_one_tick(const std::string& field, const std::string& shown, double seconds,
                                         const ArmSettings& s);

/// `v` as a person writes it, for bounds and limits in messages and --list-policies: the
/// shortest decimal that reads back as `v` when it has at most 6 significant digits (96,
/// 0.0005, 0.001), else a fraction n/1024^k when that is exact (0.0009765625 -> "1/1024"),
/// else 6 significant digits.
std::string readable_number(double v);

/// The type of a policy parameter.
enum class ParamKind { Integer, Number, Boolean, Text, Json };

/// One typed parameter of a policy (units in `unit`, and in the name where it has one:
/// `dose_mib`, `interval_s`).
struct ParamDef {
  std::string name;             ///< [a-z][a-z0-9_]*
  ParamKind kind = ParamKind::Number;
  std::string unit;             ///< "MiB", "s", "ratio", "%", "" (none)
  nlohmann::json default_value; ///< null = required
  std::optional<double> min, max;  ///< inclusive bounds (Integer, Number)
  std::string doc;              ///< one line, with the source of the default
  /// Json: checks the value: passed, or the Problem, with a JSON-pointer-like path inside the
  /// value first when it names a part ("[1].do: ...").
  std::function<Checked(const nlohmann::json&)> check;
  /// Json: the value's one spelling (after check passed), so that two spellings of one value
  /// give one arm SHA-256 (e.g. the rules' "zram_on" and {"zram_on": {}}); unset = as given.
  std::function<nlohmann::json(const nlohmann::json&)> canonical;
};

/// A registered policy.
struct PolicyInfo {
  std::string name;     ///< [a-z][a-z0-9-]* (the arm's `policy:`)
  std::string summary;  ///< one line
  std::string source;   ///< where its rule comes from (study, a seed, a practitioner's tool)
  /// Set for the study's three configurations: their position in the study's order
  /// (static-zram 1, delayed-activation 2, bounded-reclaim 3). Such a policy is also a
  /// predefined arm of the same name, with the study's parameters: a campaign lists it by
  /// name alone, and its specs carry no `policy` object (SPEC.md).
  std::optional<int> study_position;
  std::vector<ParamDef> params;
  /// Optional: the rules its parameters obey together and against the campaign (e.g. a dose
  /// below the bg memory.max); each policy file's docstring says its rules. Run by the campaign
  /// loader on every arm (harness/campaign/model/campaign_arms.hpp), after validate_params.
  SettingsCheck settings_check;
  /// Builds the policy for one case; `params` are validated with defaults filled (validate_params).
  std::function<std::unique_ptr<Policy>(const nlohmann::json& params)> make;
};

/// A ParamDef in one call (the builder every policy and rule-block file uses).
ParamDef param_def(std::string name, ParamKind kind, std::string unit, nlohmann::json dflt, std::optional<double> min,
                   std::optional<double> max, std::string doc);

/// Whether `v` is a value of `d` (its kind, its bounds, then d.check), or the Problem. The one
/// value check of validate_params and of the rules' blocks (rules/blocks.cpp).
Checked check_param_value(const ParamDef& d, const nlohmann::json& v);

/// Every registered policy, sorted by name (generated from harness/case/policies/).
const std::vector<PolicyInfo>& policies();

/// The policy called `name`, or nullptr.
const PolicyInfo* find_policy(std::string_view name);

/// The policy of `spec` (spec.policy with spec.policy_params, as parse_spec validated them).
/// Throws std::invalid_argument when spec.policy is not registered.
std::unique_ptr<Policy> make_policy(const CaseSpec& spec);

/// `given` (a JSON object, or null for {}) checked against `info.params`: unknown names (with
/// a did-you-mean, harness/yaml/did_you_mean.hpp), wrong types, values out of bounds and
/// missing required parameters throw ParamError (a Json parameter's check naming a part,
/// "[1].do: ...", gives field "rules[1].do"); the result has every parameter, defaults filled,
/// Json ones canonical (ParamDef::canonical), keys sorted. Integers stay integers.
nlohmann::json validate_params(const PolicyInfo& info, const nlohmann::json& given);

/// "'<name>' is not a parameter of <owner>[; did you mean 'X'?] (its parameters: a, b)": the
/// message for an unknown parameter name of a policy or a rule block (`owner`: "policy senpai",
/// "detector psi"), with the nearest known name (harness/yaml/did_you_mean.hpp).
std::string unknown_parameter(const std::string& name, const std::string& owner, const std::vector<ParamDef>& params);

/// info.settings_check over `params` (validated) and `settings`; nullopt when it has none.
std::optional<ParamError> settings_problem(const PolicyInfo& info, const nlohmann::json& params, const ArmSettings& settings);

/// The names of every registered policy, sorted, comma-separated (for messages).
std::string policy_names();

/// "'<name>' is not a registered policy[; did you mean 'X'?] (policies: a, b, ...)": the message
/// for a policy name the registry does not hold, with the nearest registered name
/// (harness/yaml/did_you_mean.hpp; ours). `hint` is appended inside the parentheses after the
/// list (e.g. "; `harness plan --list-policies`"), "" for none.
std::string unknown_policy(const std::string& name, const std::string& hint = "");

/// The study's arms in the study's order (study_position), e.g. {"static-zram", ...}.
std::vector<std::string> study_arms();

/// study_arms() comma-separated (for messages).
std::string study_arm_names();

/// The registry as text for `harness plan --list-policies`: per policy its name, summary,
/// source and every parameter (type, unit, default or "required", bounds, doc).
std::string policy_catalogue();

/// "Integer" | "Number" | "Boolean" | "Text" | "Json" (for --list-policies).
const char* to_string(ParamKind k);

}  // namespace harness::case_
