// The unclean mark (see unclean_mark.hpp).
#include "harness/agent/cases/unclean_mark.hpp"

#include "harness/case/run/durable_file.hpp"
#include "harness/agent/http/json_text.hpp"
#include "harness/agent/cases/registry.hpp"
#include "harness/json/limited_parse.hpp"

#include <cstdint>
#include <cstdio>
#include <ctime>

namespace harness::agent {
using nlohmann::json;

UncleanMark::UncleanMark(const std::filesystem::path& state_dir) : path_(state_dir / "unclean.json") {}

json UncleanMark::held_in_memory() const {
  std::lock_guard<std::mutex> lk(mu_);
  return not_written_;
}

json UncleanMark::read() const {
  if (json held = held_in_memory(); !held.is_null()) return held;
  try {
    const auto text = harness::case_::read_small_file(path_, kStateFileMax);
    if (!text) return nullptr;
    json j = harness::json::parse_or_discarded(*text);
    if (j.is_object()) return j;
    return json{{"case_id", nullptr}, {"problems", {"unclean.json is not a JSON object"}}};
  } catch (const std::exception& e) {
    return json{{"case_id", nullptr}, {"problems", {std::string("unclean.json unreadable: ") + e.what()}}};
  }
}

void UncleanMark::write(const std::string& case_id, const json& problems) {
  json mark{{"case_id", case_id}, {"problems", problems}, {"marked_unix_s", static_cast<std::int64_t>(::time(nullptr))}};
  try {
    harness::case_::write_file_durably(path_, dump(mark, 2) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agent: cannot write the unclean mark of case %s: %s; refusing cases until DELETE /v1/unclean\n",
                 case_id.c_str(), e.what());
    mark["not_written"] = e.what();
    std::lock_guard<std::mutex> lk(mu_);
    not_written_ = mark;
  }
}

Expected<UncleanMark::Cleared> UncleanMark::clear(json& mark) {
  mark = read();
  if (mark.is_null()) return Cleared::NotMarked;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  if (ec) return problem(ec.message());
  std::lock_guard<std::mutex> lk(mu_);
  not_written_ = nullptr;
  return Cleared::Done;
}

std::string UncleanMark::message(const json& mark) { return "VM unusable: " + reason(mark); }

std::string UncleanMark::reason_in_health(const json& health) {
  if (!health.is_object() || !health.contains("unclean") || health["unclean"].is_null()) return "";
  return reason(health["unclean"]);
}

std::string UncleanMark::reason(const json& mark) {
  std::string problems;
  if (mark.contains("problems") && mark["problems"].is_array())
    for (const auto& p : mark["problems"])
      problems += (problems.empty() ? "" : "; ") + (p.is_string() ? p.get<std::string>() : dump(p));
  std::string msg = "the restoration of case " + str_or(mark, "case_id", "?") + " was unclean (" +
                    problems + "); fix the VM (or reboot it), then clear the mark with DELETE /v1/unclean";
  if (mark.contains("not_written")) msg += " (the mark could not be written: " + str_or(mark, "not_written", "?") + ")";
  return msg;
}

}  // namespace harness::agent
