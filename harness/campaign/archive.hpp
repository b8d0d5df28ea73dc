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
// Compressed with `tar --zstd` (GNU tar and zstd: harness/scripts/install-deps.sh).
#include "results/provenance.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

struct ArchiveResult {
  std::string top;                 ///< top folder inside the archive
  std::vector<std::string> files;  ///< paths inside the archive, relative to `top`
  std::vector<std::string> notes;  ///< what was missing (e.g. no campaign_yaml in an old DB)
};

/// Throws std::runtime_error unless `out_path` ends in ".tar.zst" (checked before any work).
void require_archive_name(const std::string& out_path);

/// Stages the files above in a temporary folder next to out_path, copying `report_dir` (may be
/// empty: no report/), and writes the archive. A missing campaign_meta key is a note (and
/// a file whose content says so), never an error. Errors: std::runtime_error naming the DB,
/// the file or the tar command (with its stderr) that failed; the partial archive is removed.
ArchiveResult write_archive(const std::string& db_path, const std::string& out_path, const std::string& report_dir,
                            const results::Provenance& provenance);

}  // namespace harness::campaign
