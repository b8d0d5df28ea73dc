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

#include "harness/case/backend.hpp"
#include "harness/case/bundle.hpp"
#include "harness/case/case_outcome.hpp"
#include "harness/case/telemetry_sample.hpp"
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
  /// Json: checks the value; returns why it is wrong ("" = fine), with a JSON-pointer-like
  /// path inside the value first when it names a part ("[1].do: ...").
  std::function<std::string(const nlohmann::json&)> check;
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
  /// Builds the policy for one case; `params` are validated with defaults filled (validate_params).
  std::function<std::unique_ptr<Policy>(const nlohmann::json& params)> make;
};

/// A ParamDef in one call (the builder every policy and rule-block file uses).
ParamDef param_def(std::string name, ParamKind kind, std::string unit, nlohmann::json dflt, std::optional<double> min,
                   std::optional<double> max, std::string doc);

/// Why `v` is not a value of `d` (its kind, its bounds, then d.check), or "" when it is. The
/// one value check of validate_params and of the rules' blocks (rules/blocks.cpp).
std::string param_value_problem(const ParamDef& d, const nlohmann::json& v);

/// A policy's parameters that do not fit its ParamDefs. field() names the parameter ("dose_mib",
/// "rules[1].do"; "" for the whole object).
class ParamError : public std::runtime_error {
 public:
  ParamError(std::string field, const std::string& message);
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

/// Every registered policy, sorted by name (generated from harness/case/policies/).
const std::vector<PolicyInfo>& policies();

/// The policy called `name`, or nullptr.
const PolicyInfo* find_policy(std::string_view name);

/// The policy of `spec` (spec.policy with spec.policy_params, as parse_spec validated them).
/// Throws std::invalid_argument when spec.policy is not registered.
std::unique_ptr<Policy> make_policy(const CaseSpec& spec);

/// `given` (a JSON object, or null for {}) checked against `info.params`: unknown names,
/// wrong types, values out of bounds and missing required parameters throw ParamError; the
/// result has every parameter, defaults filled, keys sorted. Integers stay integers.
nlohmann::json validate_params(const PolicyInfo& info, const nlohmann::json& given);

/// The names of every registered policy, sorted, comma-separated (for error messages).
std::string policy_names();

/// The study's arms in the study's order (study_position), e.g. {"static-zram", ...}.
std::vector<std::string> study_arms();

/// study_arms() comma-separated (for error messages).
std::string study_arm_names();

/// The registry as text for `harness plan --list-policies`: per policy its name, summary,
/// source and every parameter (type, unit, default or "required", bounds, doc).
std::string policy_catalogue();

/// "Integer" | "Number" | "Boolean" | "Text" | "Json" (for --list-policies).
const char* to_string(ParamKind k);

}  // namespace harness::case_
