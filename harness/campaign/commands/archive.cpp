// Campaign archive for artifact evaluation (see archive.hpp).
#include "harness/campaign/commands/archive.hpp"

#include "harness/campaign/model/campaign.hpp"

#include "harness/digest/sha256.hpp"
#include "harness/vm/subprocess.hpp"
#include "results/db.hpp"
#include "results/store/meta.hpp"
#include "results/store/snapshot.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace harness::campaign {
namespace {

namespace fs = std::filesystem;

/// The campaign_meta value of `key`; "" when the DB has no campaign_meta table or no such key.
std::string meta_or_empty(results::Db& db, const char* key) {
  if (!results::has_table(db, "campaign_meta")) return {};
  return results::meta_value(db, key).value_or("");
}

void put(const fs::path& p, const std::string& text) {
  std::ofstream o(p, std::ios::binary);
  o << text;
  if (!o) throw std::runtime_error("archive: cannot write " + p.string());
}

// Removes a folder on scope exit.
struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

std::optional<PilotDependency> pilot_dependency(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  const auto plan = nlohmann::json::parse(meta_or_empty(db, "schedule_json"), nullptr, false);
  if (!plan.is_object() || !plan.contains("dose_from_pilot") || !plan["dose_from_pilot"].is_object()) return std::nullopt;
  PilotDependency p;
  p.plan_sha256 = plan["dose_from_pilot"].value("pilot_db_sha256", "");
  p.dose_bytes = plan["dose_from_pilot"].value("dose_bytes", std::int64_t{0});
  const std::string yaml = meta_or_empty(db, "campaign_yaml"), file = meta_or_empty(db, "campaign_file");
  const auto c = parse_campaign(yaml, (file.empty() ? db_path : file) + " (as stored in " + db_path + ")");
  if (c.dose_from_pilot.empty())
    throw std::runtime_error("archive: " + db_path + ": the plan took its dose from a pilot DB, but the stored campaign "
                             "YAML names none (design.dose_mib.from_pilot)");
  p.as_written = c.dose_from_pilot;
  fs::path path(c.dose_from_pilot);
  if (path.is_relative() && !file.empty()) path = fs::path(file).parent_path() / path;  // as load_campaign does
  p.path = path.lexically_normal().string();
  return p;
}

std::string rewrite_from_pilot(const std::string& yaml, const std::string& new_path) {
  std::string out;
  std::size_t start = 0;
  while (start < yaml.size()) {
    auto end = yaml.find('\n', start);
    std::string line = yaml.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const auto key = line.find("from_pilot:");
    const auto hash = line.find('#');
    if (key != std::string::npos && (hash == std::string::npos || hash > key)) {
      std::size_t v = key + std::string("from_pilot:").size();
      while (v < line.size() && line[v] == ' ') ++v;
      std::size_t e = v;
      if (v < line.size() && (line[v] == '"' || line[v] == '\'')) {
        e = line.find(line[v], v + 1);
        e = e == std::string::npos ? line.size() : e + 1;
      } else {
        while (e < line.size() && line[e] != ',' && line[e] != '}' && line[e] != ' ' && line[e] != '#') ++e;
      }
      line = line.substr(0, v) + new_path + line.substr(e);
    }
    out += line;
    if (end == std::string::npos) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

void require_archive_name(const std::string& out_path) {
  const std::string ext = ".tar.zst";
  const std::string name = fs::path(out_path).filename().string();
  if (name.size() <= ext.size() || name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
    throw std::runtime_error("archive: " + out_path + ": the output name must end in .tar.zst");
}

namespace {

/// campaign.db (a consistent copy, whatever is still in the WAL) and the campaign file, plan
/// and plan hash from campaign_meta, each with a note and a placeholder when not recorded.
void archive_campaign_files(results::Db& db, const std::string& db_path, const fs::path& top, ArchiveResult& r) {
  results::copy_db_file(db, (top / "campaign.db").string());
  r.files.push_back("campaign.db");
  const struct {
    const char* key;
    const char* file;
  } from_meta[] = {{"campaign_yaml", "campaign.yaml"}, {"schedule_json", "plan.json"}, {"schedule_sha256", "plan.sha256"}};
  for (const auto& m : from_meta) {
    std::string v = meta_or_empty(db, m.key);
    if (v.empty()) {
      r.notes.push_back(fmt::format("campaign_meta.{} is not in the DB: {} says so", m.key, m.file));
      v = fmt::format("# not recorded: campaign_meta.{} is absent from {}\n", m.key, db_path);
    } else if (std::string(m.key) == "schedule_sha256") {
      v += '\n';
    }  // campaign.yaml and plan.json byte for byte: sha256sum plan.json equals plan.sha256
    put(top / m.file, v);
    r.files.push_back(m.file);
  }
}

/// Copies the folder `from` to `top`/`to` and lists its files (relative to `top`, sorted) in
/// r.files; a note `absent` when `from` is empty or not a folder.
void archive_folder(const std::string& from, const fs::path& top, const std::string& to, const std::string& absent,
                    ArchiveResult& r) {
  if (from.empty() || !fs::is_directory(from)) {
    r.notes.push_back(absent);
    return;
  }
  fs::copy(from, top / to, fs::copy_options::recursive);
  std::vector<std::string> rep;
  for (const auto& e : fs::recursive_directory_iterator(top / to))
    if (e.is_regular_file()) rep.push_back(fs::relative(e.path(), top).string());
  std::sort(rep.begin(), rep.end());
  r.files.insert(r.files.end(), rep.begin(), rep.end());
}

/// Copies the pilot DB byte for byte to `top`/`archived` and notes whether its SHA-256 is the
/// one the plan preregistered (or that it is missing, or has an unarchived WAL).
void archive_pilot_db(const PilotDependency& pilot, const fs::path& top, const std::string& archived, ArchiveResult& r) {
  if (!fs::is_regular_file(pilot.path)) {
    r.notes.push_back("WARNING: the pilot DB " + pilot.path + " (design.dose_mib.from_pilot) is missing: not "
                      "archived; pilot/pilot.sha256 fails");
    return;
  }
  fs::copy_file(pilot.path, top / archived);  // byte for byte: its SHA-256 is the plan's
  r.files.push_back(archived);
  for (const char* suffix : {"-wal"})  // an unfinished write-ahead log would be part of what the rule read
    if (fs::exists(pilot.path + suffix) && fs::file_size(pilot.path + suffix) > 0)
      r.notes.push_back(fmt::format("the pilot DB {} has a non-empty {}{}: not archived (the plan hashed the main "
                                    "file only)", pilot.path, pilot.path, suffix));
  const std::string got = harness::digest::sha256_file((top / archived).string());
  if (got == pilot.plan_sha256)
    r.notes.push_back("pilot DB " + pilot.path + " archived as " + archived +
                      "; its SHA-256 equals the plan's (check: sha256sum -c pilot/pilot.sha256)");
  else
    r.notes.push_back("WARNING: the pilot DB " + pilot.path + " has SHA-256 " + got + ", the plan preregistered " +
                      pilot.plan_sha256 + ": it changed after planning; pilot/pilot.sha256 fails");
}

/// pilot/README.txt: where the dose came from and how to check it from the archive.
std::string pilot_readme(const PilotDependency& pilot, const std::string& archived) {
  return fmt::format("The bounded-reclaim dose of this campaign ({} MiB) was chosen at plan time by the pilot rule "
                     "from the pilot DB\n{} (archived here as {}).\n\n"
                     "Check it, from the archive's top folder:\n"
                     "  sha256sum -c pilot/pilot.sha256        # the pilot DB is the one the plan preregistered\n"
                     "                                        # (plan.json dose_from_pilot.pilot_db_sha256)\n"
                     "  harness pilot-select pilot/campaign.db # Table 3 and the chosen dose again\n"
                     "  harness plan campaign.yaml             # the same schedule SHA-256 as plan.sha256\n"
                     "                                        # (pinned_commit: build needs the same harness commit)\n"
                     "pilot/report/ holds Table 3 as harness archive made it.\n",
                     pilot.dose_bytes / (1024 * 1024), pilot.path, archived);
}

/// The dose came from a pilot DB: archive it so that the dose can be checked, point the
/// archived campaign file at it, and keep the file as planned beside it.
void archive_pilot(results::Db& db, const PilotDependency& pilot, const fs::path& top,
                   const std::string& pilot_report_dir, ArchiveResult& r) {
  const std::string archived = "pilot/campaign.db";
  fs::create_directories(top / "pilot");
  const std::string yaml = meta_or_empty(db, "campaign_yaml");
  put(top / "campaign.as-planned.yaml", yaml);
  r.files.push_back("campaign.as-planned.yaml");
  put(top / "campaign.yaml",
      "# Archived copy (harness archive): design.dose_mib.from_pilot points at the archived pilot DB\n"
      "# " + archived + " (it said: " + pilot.as_written + "). campaign.as-planned.yaml is the file as planned.\n" +
          rewrite_from_pilot(yaml, archived));
  archive_pilot_db(pilot, top, archived, r);
  put(top / "pilot/pilot.sha256", pilot.plan_sha256 + "  " + archived + "\n");
  r.files.push_back("pilot/pilot.sha256");
  put(top / "pilot/README.txt", pilot_readme(pilot, archived));
  r.files.push_back("pilot/README.txt");
  archive_folder(pilot_report_dir, top, "pilot/report", "no pilot report (Table 3) included", r);
}

/// MANIFEST.sha256: `sha256sum` lines of every file archived so far.
void write_manifest(const fs::path& top, ArchiveResult& r) {
  std::string manifest;
  for (const auto& f : r.files) manifest += harness::digest::sha256_file((top / f).string()) + "  " + f + "\n";
  put(top / "MANIFEST.sha256", manifest);
  r.files.push_back("MANIFEST.sha256");
}

/// Packs `staging`/`top` into `out` with tar --zstd, through OUT.partial renamed at the end.
void pack(const fs::path& staging, const std::string& top, const fs::path& out) {
  const std::string partial = out.string() + ".partial";
  const auto res = harness::vm::run({"tar", "--zstd", "-cf", partial, "-C", staging.string(), top});
  if (res.exit_code != 0) {
    std::error_code ec;
    fs::remove(partial, ec);
    throw std::runtime_error(fmt::format("archive: `tar --zstd -cf {} ...` failed (exit {}): {}", partial,
                                         res.exit_code, res.err));
  }
  fs::rename(partial, out);
}

}  // namespace

ArchiveResult write_archive(const std::string& db_path, const std::string& out_path, const std::string& report_dir,
                            const results::Provenance& provenance, const std::string& pilot_report_dir) {
  if (!fs::exists(db_path)) throw std::runtime_error("archive: database not found: " + db_path);
  require_archive_name(out_path);
  const fs::path out = fs::absolute(out_path);
  if (!harness::vm::have_program("tar") || !harness::vm::have_program("zstd"))
    throw std::runtime_error("archive: needs GNU tar and zstd in PATH (harness/scripts/install-deps.sh installs them)");
  fs::create_directories(out.parent_path());

  ArchiveResult r;
  TempDir tmp{out.parent_path() / fmt::format(".{}.staging-{}", out.filename().string(), ::getpid())};
  fs::remove_all(tmp.path);
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  std::string name = provenance.campaign_name.empty() ? meta_or_empty(db, "name") : provenance.campaign_name;
  if (name.empty()) name = fs::path(db_path).stem().string();
  r.top = name + "-archive";
  const fs::path top = tmp.path / r.top;
  fs::create_directories(top);

  archive_campaign_files(db, db_path, top, r);
  put(top / "build.json", results::provenance_json(provenance) + "\n");
  r.files.push_back("build.json");
  if (const auto pilot = pilot_dependency(db_path)) archive_pilot(db, *pilot, top, pilot_report_dir, r);
  archive_folder(report_dir, top, "report", "no report folder included", r);
  write_manifest(top, r);
  pack(tmp.path, r.top, out);
  return r;
}

}  // namespace harness::campaign
