#pragma once
// `harness archive DB OUT.tar.zst`: one file for artifact evaluation. Layout inside the
// archive (top folder <campaign name>-archive/):
//
//   campaign.db         consistent copy of the DB (SQLite VACUUM INTO: WAL content included)
//   campaign.yaml       the campaign file as planned (campaign_meta.campaign_yaml)
//   plan.json           the preregistered schedule, byte for byte (campaign_meta.schedule_json)
//   plan.sha256         its SHA-256 as stored (campaign_meta.schedule_sha256): `sha256sum
//                       plan.json` reproduces it
//   build.json          provenance: harness version, commit, dirty flag, accelerators, kernels,
//                       case commits, date, command line (results/provenance.hpp)
//   report/             the report made by `harness analyze` (or `pilot-select` for a pilot DB)
//   MANIFEST.sha256     sha256sum-format list of every file above (check: sha256sum -c)
//
// A campaign planned with `design.dose_mib: {from_pilot: PATH}` depends on its pilot DB, so
// the archive also holds (ours):
//
//   pilot/campaign.db   the pilot DB, byte for byte (its SHA-256 is preregistered in plan.json)
//   pilot/pilot.sha256  sha256sum line with the plan's pilot_db_sha256 for pilot/campaign.db:
//                       `sha256sum -c pilot/pilot.sha256` checks the pilot DB against the plan
//   pilot/report/       Table 3 and the chosen dose (`harness pilot-select` of that DB)
//   pilot/README.txt    what these are and how to check them
//   campaign.yaml       rewritten: from_pilot points at pilot/campaign.db (so `harness plan
//                       campaign.yaml` in the archive's folder plans the same schedule)
//   campaign.as-planned.yaml  the campaign file as planned, byte for byte
//                       (campaign_meta.campaign_sha256)
//
// Compressed with `tar --zstd` (GNU tar and zstd: harness/scripts/install-deps.sh).
#include "results/provenance.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness::campaign {

struct ArchiveResult {
  std::string top;                 ///< top folder inside the archive
  std::vector<std::string> files;  ///< paths inside the archive, relative to `top`
  std::vector<std::string> notes;  ///< what was missing (e.g. no campaign_yaml in an old DB)
};

/// The pilot DB a campaign DB's plan depends on (design.dose_mib {from_pilot}).
struct PilotDependency {
  std::string path;          ///< the pilot DB as the campaign file names it, resolved (campaign_file's folder)
  std::string as_written;    ///< from_pilot as written in the campaign YAML
  std::string plan_sha256;   ///< plan.json dose_from_pilot.pilot_db_sha256
  std::int64_t dose_bytes = 0;
};

/// The pilot dependency of the plan stored in `db_path`, or nullopt when its dose is not from
/// a pilot (or the DB holds no plan). Throws std::runtime_error when the stored plan says
/// dose_from_pilot but the stored campaign YAML names no pilot DB.
std::optional<PilotDependency> pilot_dependency(const std::string& db_path);

/// `yaml` with every design.dose_mib.from_pilot value outside comments replaced by
/// `new_path` (quoted or plain). Returns the text unchanged when there is none.
std::string rewrite_from_pilot(const std::string& yaml, const std::string& new_path);

/// Throws std::runtime_error unless `out_path` ends in ".tar.zst" (checked before any work).
void require_archive_name(const std::string& out_path);

/// Stages the files above in a temporary folder next to out_path, copying `report_dir` (may be
/// empty: no report/), and writes the archive. A missing campaign_meta key is a note (and
/// a file whose content says so), never an error. Errors: std::runtime_error naming the DB,
/// the file or the tar command (with its stderr) that failed; the partial archive is removed.
/// `pilot_report_dir` (may be empty): the pilot's Table 3 report, copied to pilot/report/
/// when the plan depends on a pilot DB. The pilot DB is checked against the plan's SHA-256:
/// a mismatch or a missing pilot DB is a note (and the archive's pilot.sha256 check fails).
ArchiveResult write_archive(const std::string& db_path, const std::string& out_path, const std::string& report_dir,
                            const results::Provenance& provenance, const std::string& pilot_report_dir = "");

}  // namespace harness::campaign
