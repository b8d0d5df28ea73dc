#pragma once
// What each arm's policy did in the cases of Table 4's blocks (ours; docs/PROTOCOL.md "A treatment
// that did not act"): whether the study's trigger fired, the memory.reclaim writes it made and the
// bytes they asked, zram swapped on, bg memory.high written. A case *acted* when its policy took
// at least one action on the guest: a memory.reclaim write (a reclaim_actions row), a zram swapon
// (`backend_on` event) or a memory.high write (`memory_high_set` event). A treatment of the
// declared family that did not act in some of its cases is named in a warning at the top of the
// report; its comparisons stay as they are (intention to treat: every case keeps its outcome).
#include "analysis/tables/table.hpp"
#include "analysis/data/triplets.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace analysis {

/// Whether one case's policy acted (see the file comment).
bool case_acted(const CaseSummary& c);

/// One arm's actions over the completed cases of the complete blocks (lost cases have no record of
/// what their policy did and are not counted). Counts of cases unless named otherwise.
struct ArmActions {
  std::string arm;
  bool treatment = false;           ///< a treatment of the declared family
  int cases = 0;                    ///< completed cases of the arm in complete blocks
  int trigger_fired = 0;            ///< cases with a `trigger` event (the study's trigger fired)
  int would_trigger = 0;            ///< cases with a `would_trigger` event (no action at the trigger)
  int with_writes = 0;              ///< cases with at least one memory.reclaim write
  int writes = 0;                   ///< memory.reclaim writes, all cases
  std::int64_t bytes_asked = 0;     ///< sum of the writes' requested bytes, bytes
  std::vector<double> asked_mib;    ///< per case, the bytes its writes asked, MiB
  int zram_on = 0;                  ///< cases with a `backend_on` event
  int memory_high = 0;              ///< cases with a `memory_high_set` event
  int acted = 0;                    ///< cases that acted (case_acted)
  std::vector<std::string> not_acted;  ///< "<case_id> (trigger: fired | would fire | never)" of the others
};

/// Per arm of ts.arms, in that order, over the completed cases of ts's blocks.
std::vector<ArmActions> arm_actions(const TripletSet& ts);

/// Table `treatment_actions`: one row per arm (the columns of ArmActions; MiB).
Table treatment_actions_table(const std::vector<ArmActions>& arms);

/// report.json extra.treatment_actions: one object per arm with ArmActions' fields (bytes_asked
/// in bytes, asked_mib per case in MiB).
nlohmann::json treatment_actions_json(const std::vector<ArmActions>& arms);

/// One warning per treatment of the family that did not act in some of its cases, naming them and
/// its comparisons, read by intention to treat. Empty when every treatment acted in every case.
std::vector<std::string> not_acted_warnings(const std::vector<ArmActions>& arms, const TripletSet& ts);

/// treatment -> the sentence its verdict line carries when it did not act in some cases
/// ("(bounded-reclaim took no action in 1 of 1 case(s): ...)"); treatments that always acted are absent.
std::map<std::string, std::string> not_acted_notes(const std::vector<ArmActions>& arms);

}  // namespace analysis
