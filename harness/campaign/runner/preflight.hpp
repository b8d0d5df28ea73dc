#pragma once
// Fleet qualification before scheduling (study: "Before scheduling cases, qualification
// checked ... the source commit used for the campaign"; PROTOCOL.md "Qualification before
// scheduling"). `harness run` asks every VM's agent for its qualification report
// (GET /v1/qualification, the `harness qualify --json` shape) before any case, and refuses
// to start when one VM fails, when a pinned campaign meets a different or dirty build, or
// when the VMs differ in a setting that changes reclaim behaviour.
#include "harness/campaign/model/campaign.hpp"
#include "harness/pool/agent_wait.hpp"
#include "harness/pool/pool.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace harness::campaign {

/// Settings that must be equal on every VM of a campaign (qualification report `recorded`
/// keys): kernel release, vm.swappiness, MGLRU (/sys/kernel/mm/lru_gen/enabled), THP mode
/// (/sys/kernel/mm/transparent_hugepage/enabled), clocksource. PROTOCOL.md.
const std::vector<std::string>& fleet_uniform_keys();

/// Kernel configuration items the experiment depends on, compared across the fleet like
/// fleet_uniform_keys() (dotted paths into the report's `recorded`): CONFIG_PSI, CONFIG_ZRAM,
/// CONFIG_MEMCG, CONFIG_LRU_GEN. judge_fleet adds the campaign's compressor's item
/// (qualify::compressor_config_item) and its availability (recorded.compressors), which must
/// also be "yes" on every VM. zswap is judged by each VM's own qualification (check zswap).
const std::vector<std::string>& fleet_kernel_config_keys();

/// One VM's qualification as the preflight judged it.
struct VmQualification {
  std::string vm;
  bool passed = false;                       ///< report passed and the commit pin holds
  std::vector<std::string> reasons;          ///< why not (report reasons, commit, no answer)
  std::map<std::string, std::string> values; ///< fleet_uniform_keys(), source_commit, the kernel config keys and
                                             ///< "<compressor> available", as text
  std::string source_commit;                 ///< recorded.source_commit ("" = not reported)
  std::optional<bool> source_dirty;          ///< recorded.source_dirty
};

/// The preflight's verdict.
struct Preflight {
  bool ok = false;
  std::vector<VmQualification> vms;
  std::vector<std::string> problems;  ///< every reason to refuse, one line each
  std::string table;                  ///< per-VM table of the values, then the problems
};

/// Judges already fetched reports (vm -> report JSON; a JSON string instead of an object
/// means "no report: <that text>"). The commit rule (PROTOCOL.md): with a 40-hex
/// `c.pinned_commit`, recorded.source_commit must equal it and recorded.source_dirty be false.
Preflight judge_fleet(const Campaign& c, const std::vector<std::pair<std::string, nlohmann::json>>& reports);

/// Fetches every guest's report with the agent client and judges them (judge_fleet).
Preflight fleet_preflight(const Campaign& c, const std::vector<pool::Guest>& guests);

/// How long and how often the runner waits for an agent that does not answer, and the wait
/// itself (harness/pool/agent_wait.hpp): a host that does not answer is waited for, never
/// charged an attempt.
using pool::HostWait;
using pool::wait_for_agents;

/// Thrown by `harness run` when the preflight refuses (what() holds the table). No case
/// was submitted and no attempt recorded.
class PreflightRefused : public CampaignError {
 public:
  using CampaignError::CampaignError;
};

}  // namespace harness::campaign
