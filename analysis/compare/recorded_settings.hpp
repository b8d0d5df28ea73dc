#pragma once
// The settings a campaign DB records, as (setting, value) text, so that `harness compare DB1 DB2
// ...` can list every one that differs between campaigns (compare_campaigns.hpp). Sources, in
// this order:
//   campaign <key>          campaign_meta name, kind, seed, campaign_sha256, schedule_sha256
//   campaign YAML <path>    every leaf of the stored campaign YAML (campaign_meta.campaign_yaml,
//                           the preregistered plan's text) by dotted path as written
//                           (`cgroups.bg_memory_high_mib`, `regimes[1].rate_mib_s`; a list of
//                           scalars is one value, `[a, b]`); a key left out is not recorded
//   arm <name>              the `arms` table (results schema version 6): policy, params, sha256
//   accelerator, guest kernel, harness commit
//                           distinct values over the cases (results::collect_provenance)
//   environment: <field>    what the completed cases recorded of their VM (environment_table.hpp:
//                           kernel command line, clocksource, THP, swappiness, ...)
// The DB records no guest image hash (cases carry none), so none is listed.
#include <string>
#include <utility>
#include <vector>

namespace analysis {

/// The settings of the campaign DB at `db_path` (list above). An unreadable campaign YAML is one
/// row "campaign YAML" = "unreadable: <parser message>". Errors: results::DbError when the DB
/// cannot be read.
std::vector<std::pair<std::string, std::string>> recorded_settings(const std::string& db_path);

}  // namespace analysis
