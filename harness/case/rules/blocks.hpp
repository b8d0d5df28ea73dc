#pragma once
// The building blocks of the `rules` policy (harness/case/policies/rules.cpp): detectors
// (WHEN) and actions (DO), each one small file, registered the way policies are:
//   harness/case/rules/detectors/<stem>.cpp defines `DetectorInfo detector_<stem>()`,
//   harness/case/rules/actions/<stem>.cpp   defines `RuleActionInfo action_<stem>()`,
// and harness/case/CMakeLists.txt generates the list of those functions from the two folders
// (rules/block_list.cpp.in), so a new block is one new file. The syntax of a rule, with one
// example per block: harness/case/rules/README.md.
//
// A detector is judged on every tick of the pressure and recovery phases (it may keep
// state: windows, baselines) and says whether its condition holds on that tick and what it
// read. An action runs when its rule decides to act; it must not block (memory.reclaim and
// memory.high writes run on their own threads) and it records its own events (reclaim_start,
// reclaim_end, backend_on, memory_high_set, ...); the rule's decision itself is the `rule`
// event (policies/rules.cpp).
//
// Parameters of a block are ParamDefs (policy.hpp) with one difference: a default of null
// means "optional, absent stays absent" (the block decides what absence means, e.g. the
// case's own trigger); a parameter a block needs is required by its `check`.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/control/policy.hpp"
#include "harness/case/control/reclaim_writer.hpp"
#include "harness/error/expected.hpp"
#include "harness/kernel/cgroup.hpp"

namespace harness::case_::rules {

/// What a detector saw on one tick.
struct Observation {
  bool holds = false;
  nlohmann::json inputs = nlohmann::json::object();  ///< the readings it judged (into the `rule` event)
  /// When the detector fired, CLOCK_MONOTONIC ns, for a detector that fires once and then
  /// holds (psi_window_trigger: the tick its trigger fired); nullopt = it holds on this tick's
  /// own evidence, so it fired at this tick.
  std::optional<std::int64_t> fired_t_ns;
};

class Detector {
 public:
  virtual ~Detector() = default;
  /// Every tick of the pressure and recovery phases, in order (TickInput, policy.hpp).
  virtual Observation observe(const TickInput& tick, ActionContext& ctx) = 0;
  /// True for the study's PSI window trigger with the case's own parameters: the arm then
  /// acts at the trigger (the controller records `trigger`, not `would_trigger`).
  virtual bool is_case_trigger() const { return false; }
};

/// What the rules of one arm share while the case runs.
struct Shared {
  /// One memory.reclaim writer per arm (one write in flight at a time, whichever rule asked).
  std::optional<ReclaimWriter> writer;
  std::map<int, nlohmann::json> write_tags;  ///< write seq -> tag of its reclaim_end event
  std::vector<ReclaimRow> rows;              ///< finished writes (reclaim_actions rows)
  std::vector<ReclaimRecord> records;        ///< the same writes' records (outcome_json.reclaim)
  std::optional<StepRecord> backend_on;      ///< the first zram swapon (outcome_json.backend_on)
  /// bg memory.high before the first rule set it (read once; restored by an at_end step).
  std::optional<harness::kernel::MemoryLimit> memory_high_original;
  /// Run by the rules policy after every action's finish(), last registered first (restores).
  std::vector<std::function<void(CaseBundle&)>> at_end;

  /// The writer (made on first use).
  ReclaimWriter& reclaim_writer(const ActionContext& ctx);
  /// Finished writes as reclaim_end events and rows (never blocks); `wait`: first waits for
  /// the write in flight (finish()).
  void collect_writes(const ActionContext& ctx, std::vector<ControllerEvent>& events, bool wait = false);
};

/// What one action did when its rule decided to act.
struct Acted {
  std::string action = "act";  ///< act | skip (could not act now: busy, input missing)
  std::string reason;          ///< why a skip
  std::int64_t requested_bytes = 0;
  nlohmann::json detail = nlohmann::json::object();  ///< its inputs and outputs (into the `rule` event)
};

/// Which rule asks an action to act, and on what.
struct Firing {
  int rule = 0;                    ///< the rule's index (for the action's own events)
  std::int64_t detector_t_ns = 0;  ///< when its detector fired (Observation::fired_t_ns, else this tick), CLOCK_MONOTONIC ns
};

class RuleAction {
 public:
  virtual ~RuleAction() = default;
  /// Acts on this tick for rule `by.rule`; appends its events.
  virtual Acted act(const Firing& by, const TickInput& tick, ActionContext& ctx, Shared& shared,
                    std::vector<ControllerEvent>& events) = 0;
  /// Every tick, before any rule is judged (e.g. record a memory.high write that returned).
  virtual void on_tick(ActionContext& /*ctx*/, Shared& /*shared*/, std::vector<ControllerEvent>& /*events*/) {}
  /// After the schedule (waits for what it started, restores what it changed).
  virtual void finish(ActionContext& /*ctx*/, Shared& /*shared*/, CaseBundle& /*bundle*/, CaseOutcome& /*outcome*/) {}
};

/// A registered detector. `name` is [a-z][a-z0-9_]* (the key under `when`).
struct DetectorInfo {
  std::string name, summary;
  std::vector<ParamDef> params;  ///< default null = optional (see the header comment)
  /// Checks the parameters together (passed, or the Problem), after each was checked on its own.
  std::function<Checked(const nlohmann::json& params)> check;
  /// Optional: checks the parameters against the campaign (policy.hpp SettingsCheck; the error's
  /// field is the block's parameter, the rules policy puts the rule's path before it).
  SettingsCheck settings_check;
  std::function<std::unique_ptr<Detector>(const nlohmann::json& params)> make;
};

/// A registered action. `name` is [a-z][a-z0-9_]* (the key under `do`).
struct RuleActionInfo {
  std::string name, summary;
  std::vector<ParamDef> params;
  std::function<Checked(const nlohmann::json& params)> check;  ///< as DetectorInfo::check
  SettingsCheck settings_check;  ///< as DetectorInfo::settings_check
  std::function<std::unique_ptr<RuleAction>(const nlohmann::json& params)> make;
};

/// Every registered block, sorted by name (generated from rules/detectors/ and rules/actions/).
const std::vector<DetectorInfo>& detectors();
const std::vector<RuleActionInfo>& rule_actions();
const DetectorInfo* find_detector(std::string_view name);
const RuleActionInfo* find_rule_action(std::string_view name);
std::string detector_names();     ///< comma-separated
std::string rule_action_names();  ///< comma-separated

/// How often a rule may act.
struct Mode {
  enum Kind { Once, Every, Cooldown } kind = Once;
  std::int64_t period_ns = 0;  ///< every_s / cooldown_s
  nlohmann::json to_json() const;  ///< "once" | {"every_s": N} | {"cooldown_s": N}
};

/// One rule, checked, its blocks' parameters filled.
struct RuleSpec {
  std::string when, act;  ///< block names
  nlohmann::json when_params, do_params;
  Mode mode;
};

/// A `rules` value that is wrong: `path` names the part ("[1].do", "[0].when.psi.above_pct").
class RuleError : public std::runtime_error {
 public:
  RuleError(std::string path, const std::string& message) : std::runtime_error(message), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Parses and checks a list of rules (README.md); throws RuleError.
std::vector<RuleSpec> parse_rules(const nlohmann::json& rules);
/// parse_rules' verdict: passed, or the Problem "<path>: <what is wrong>".
Checked check_rules(const nlohmann::json& rules);
/// The one spelling of a valid list of rules (ParamDef::canonical): every block as
/// {"NAME": {PARAMS}} with its defaults filled, every mode written out ("once" included), so
/// "zram_on" and {"zram_on": {}} are one arm. Throws RuleError as parse_rules.
nlohmann::json canonical_rules(const nlohmann::json& rules);
/// The settings rules of a valid list (policy.hpp SettingsCheck): each block's settings_check,
/// and every_s / cooldown_s at most the pressure phase. The field is "rules[i].<part>" ("rules[0].do.reclaim.mib").
std::optional<ParamError> rules_settings_problem(const nlohmann::json& rules, const ArmSettings& settings);

/// Passed when exactly one of `names` is present in `params`, else the Problem (a block's check).
Checked exactly_one_of(const nlohmann::json& params, const std::vector<std::string>& names);

/// A sample's bg some/full total (`full` false = some).
std::optional<std::int64_t> psi_total(const TelemetrySample& s, bool full);
/// The read time of a sample (read_ns, or the tick when not stamped).
inline std::int64_t read_time_ns(const TelemetrySample& s) { return s.read_ns.value_or(s.t_ns); }

}  // namespace harness::case_::rules
