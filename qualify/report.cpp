// Qualification report: reasons, JSON and text table (qualify.hpp).
#include <sstream>

#include "qualify/qualify.hpp"

namespace qualify {

std::vector<std::string> Report::reasons() const {
  std::vector<std::string> out;
  for (const auto& c : checks)
    if (c.required && !c.passed) out.push_back(c.name + ": " + c.found + (c.fix.empty() ? "" : " -> fix: " + c.fix));
  return out;
}

nlohmann::json Report::to_json() const {
  nlohmann::json j;
  j["passed"] = passed;
  j["checks"] = nlohmann::json::array();
  for (const auto& c : checks)
    j["checks"].push_back(
        {{"name", c.name}, {"required", c.required}, {"passed", c.passed}, {"found", c.found}, {"fix", c.fix}});
  j["recorded"] = recorded;
  j["reasons"] = reasons();
  return j;
}

std::string Report::to_table() const {
  size_t w = 5;
  for (const auto& c : checks) w = std::max(w, c.name.size());
  std::ostringstream o;
  o << "Qualification: " << (passed ? "PASSED" : "FAILED") << "\n\n";
  o << "result  " << std::string("check") << std::string(w - 5 + 2, ' ') << "found\n";
  for (const auto& c : checks) {
    const char* tag = c.passed ? "PASS  " : (c.required ? "FAIL  " : "info  ");
    o << tag << "  " << c.name << std::string(w - c.name.size() + 2, ' ') << c.found << "\n";
    if (!c.passed && !c.fix.empty()) o << "        " << std::string(w + 2, ' ') << "fix: " << c.fix << "\n";
  }
  o << "\nRecorded (not judged):\n";
  for (const auto& [k, v] : recorded.items()) {
    o << "  " << k << ": " << (v.is_string() ? v.get<std::string>() : v.dump()) << "\n";
  }
  return o.str();
}

}  // namespace qualify
