// Settings of several sides lined up (see setting_differences.hpp).
#include "analysis/compare/setting_differences.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace analysis {

std::vector<SettingRow> line_up_settings(const std::vector<std::vector<std::pair<std::string, std::string>>>& sides) {
  std::vector<SettingRow> rows;
  std::map<std::string, std::size_t> at;  // setting -> its row
  for (std::size_t i = 0; i < sides.size(); ++i)
    for (const auto& [setting, value] : sides[i]) {
      auto [it, fresh] = at.try_emplace(setting, rows.size());
      if (fresh) rows.push_back({setting, std::vector<std::string>(sides.size(), kSettingNotRecorded), false});
      rows[it->second].values[i] = value;
    }
  for (auto& r : rows)
    r.differs = std::any_of(r.values.begin(), r.values.end(), [&](const std::string& v) { return v != r.values.front(); });
  return rows;
}

Table setting_table(const std::string& id, const std::string& title, const std::vector<std::string>& names,
                    const std::vector<SettingRow>& rows) {
  Table t{id, title, {{"setting", 0}}, {}, {}};
  for (const auto& n : names) t.columns.push_back({n, 0, tidy_name(n)});
  t.columns.push_back({"differs", 0});
  for (const auto& r : rows) {
    if (r.values.size() != names.size())
      throw std::invalid_argument("setting_table " + id + ": setting " + r.setting + " has " +
                                  std::to_string(r.values.size()) + " values for " + std::to_string(names.size()) +
                                  " sides");
    std::vector<nlohmann::json> row{r.setting};
    for (const auto& v : r.values) row.push_back(v);
    row.push_back(r.differs ? "yes" : "no");
    t.add(std::move(row));
  }
  return t;
}

std::vector<std::string> difference_texts(const std::vector<std::string>& names, const std::vector<SettingRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) {
    if (!r.differs) continue;
    std::string s = r.setting + " (";
    for (std::size_t i = 0; i < names.size() && i < r.values.size(); ++i)
      s += (i ? "; " : "") + names[i] + " " + r.values[i];
    out.push_back(s + ")");
  }
  return out;
}

}  // namespace analysis
