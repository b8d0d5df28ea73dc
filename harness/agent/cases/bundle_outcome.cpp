// What a finished executor left (see bundle_outcome.hpp).
#include "harness/agent/cases/bundle_outcome.hpp"

#include "harness/json/limited_parse.hpp"
#include "results/db.hpp"
#include "results/store/cases.hpp"
#include "results/store/restoration.hpp"

namespace harness::agent {
using nlohmann::json;
namespace {

/// An outcome without a verdict: the VM's state is unknown, so it is marked.
BundleOutcome no_verdict(const std::string& error, const std::string& problem) {
  BundleOutcome o;
  o.error = error;
  o.unclean = true;
  o.problems = json::array({problem});
  o.restoration = {{"clean", nullptr}, {"problems", o.problems}};
  return o;
}

/// The verdict's problems of a restoration row's detail_json (empty when none are listed).
json problems_of(const json& detail) {
  if (detail.is_object() && detail.contains("verdict") && detail["verdict"].is_object() &&
      detail["verdict"].contains("problems") && detail["verdict"]["problems"].is_array())
    return detail["verdict"]["problems"];
  return json::array();
}

}  // namespace

BundleOutcome read_bundle(const std::string& id, const std::filesystem::path& bundle, int exit_code) {
  std::error_code ec;
  const std::string code = std::to_string(exit_code);
  if (!std::filesystem::exists(bundle, ec))
    return no_verdict("executor exited with code " + code + " without writing a bundle (see executor.log)",
                      "no restoration verdict: the executor exited with code " + code +
                          " without writing a bundle, so the VM's state is unknown");
  BundleOutcome o;
  try {
    results::Db db(bundle.string(), results::Db::Mode::ReadOnly);
    if (const auto c = results::read_case(db, id)) {
      o.state = state_of_bundle_status(c->status);
      o.error = c->error.value_or("");
    } else {
      o.error = "bundle " + bundle.string() + " has no row for this case";
    }
    const auto r = results::read_restoration(db, id);
    if (!r) {  // the executor ended before it set anything up (restoration runs once anything is)
      o.restoration = {{"clean", nullptr}, {"problems", json::array()}, {"ran", false}};
      return o;
    }
    const bool clean = r->clean != 0;
    o.problems = problems_of(r->detail_json ? harness::json::parse_or_discarded(*r->detail_json) : json());
    if (!clean && o.problems.empty()) o.problems.push_back("restoration.clean = 0 (no problems listed)");
    o.unclean = !clean;
    o.restoration = {{"clean", clean}, {"problems", o.problems}, {"ran", true}};
  } catch (const std::exception& e) {
    return no_verdict(std::string("bundle unreadable: ") + e.what(),
                      "no restoration verdict: the bundle is unreadable (" + std::string(e.what()) +
                          "), so the VM's state is unknown");
  }
  return o;
}

}  // namespace harness::agent
