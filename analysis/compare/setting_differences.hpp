#pragma once
// Settings of several sides lined up, and the ones that differ: the one piece of code behind
// the setting table of `harness compare --published` (the study's setting beside a campaign's,
// compare_published.hpp) and the "settings that differ" table of `harness compare DB1 DB2 ...`
// (compare_campaigns.hpp). Values are text; a side that does not record a setting shows
// kSettingNotRecorded.
#include "analysis/tables/table.hpp"

#include <string>
#include <utility>
#include <vector>

namespace analysis {

/// Cell text of a setting a side does not record.
inline constexpr const char* kSettingNotRecorded = "not recorded";

/// One setting: its value on each side (in the sides' order) and whether it differs.
struct SettingRow {
  std::string setting;
  std::vector<std::string> values;
  bool differs = false;
};

/// Every setting any side records, in the order of first appearance (the first side's order,
/// then each later side's others); values kSettingNotRecorded where a side lacks the setting;
/// differs iff the values are not all equal. `sides[i]` = (setting, value) pairs of side i.
std::vector<SettingRow> line_up_settings(const std::vector<std::vector<std::pair<std::string, std::string>>>& sides);

/// Table `id` with columns "setting", one per side (header names[i], CSV name tidy_name of it)
/// and "differs" (yes / no), one row per SettingRow. Errors: std::invalid_argument when a row's
/// values are not one per name.
Table setting_table(const std::string& id, const std::string& title, const std::vector<std::string>& names,
                    const std::vector<SettingRow>& rows);

/// One text per differing row: "<setting> (<name0> <value0>; <name1> <value1>; ...)".
std::vector<std::string> difference_texts(const std::vector<std::string>& names, const std::vector<SettingRow>& rows);

}  // namespace analysis
