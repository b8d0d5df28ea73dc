// The import of an attempt's bundle (see import.hpp).
#include "harness/campaign/store/import.hpp"

#include "harness/json/limited_parse.hpp"
#include "results/store/cases.hpp"

namespace harness::campaign {
namespace {

ImportObserver g_import_observer = nullptr;  // set_import_observer: none in the shipped CLI

/// `s` when not empty, else nullopt (NULL).
std::optional<std::string> unless_empty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

/// The binaries that ran the case (PROTOCOL.md): the columns when the executor set them, else
/// outcome_json.source {commit, dirty}.
void fill_source(results::Db& d, const std::string& case_id, const std::optional<std::string>& outcome) {
  if (!outcome) return;
  const auto j = harness::json::parse_or_discarded(*outcome);
  if (!j.is_object() || !j.contains("source") || !j["source"].is_object()) return;
  const auto& src = j["source"];
  std::optional<std::string> commit;
  std::optional<std::int64_t> dirty;
  if (src.contains("commit") && src["commit"].is_string()) commit = src["commit"].get<std::string>();
  if (src.contains("dirty") && src["dirty"].is_boolean()) dirty = src["dirty"].get<bool>() ? 1 : 0;
  results::fill_case_source(d, case_id, commit, dirty);
}

}  // namespace

void set_import_observer(ImportObserver observer) { g_import_observer = observer; }

std::string import_attempt(results::Db& db, const std::string& bundle_path, const AttemptRecord& a,
                           const RanOn& on, const std::string& bundle_case_id) {
  std::string status;
  AttemptRecord rec = a;
  results::import_bundle(db, bundle_path, a.case_id, [&](results::Db& d) {
    const auto row = results::read_case(d, a.case_id);
    if (!row) throw results::DbError(bundle_path + ": case '" + a.case_id + "' vanished during import");
    status = row->status;
    results::set_case_attempt(d, a.case_id, a.attempt);
    fill_source(d, a.case_id, row->outcome_json);
    if (!on.accelerator.empty()) {  // the hosts file first (it knows what ran the guest), else what the guest detected
      if (row->accelerator && *row->accelerator != on.accelerator) {
        if (!rec.detail.is_object()) rec.detail = nlohmann::json::object();
        rec.detail["accelerator_detected"] = *row->accelerator;
      }
      results::set_case_accelerator(d, a.case_id, on.accelerator);
    }
    const std::optional<std::int64_t> over =
        on.overcommitted ? std::optional<std::int64_t>(*on.overcommitted ? 1 : 0) : std::nullopt;
    results::set_case_placement(d, a.case_id, unless_empty(on.host_uri), over, unless_empty(on.engine_kind));
    record_attempt_outcome(d, rec, status, row->error);
    if (g_import_observer) g_import_observer(a.case_id);
  }, bundle_case_id);
  return status;
}

}  // namespace harness::campaign
