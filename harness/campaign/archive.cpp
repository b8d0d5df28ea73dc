// Campaign archive for artifact evaluation (see archive.hpp).
#include "harness/campaign/archive.hpp"

#include "harness/digest/sha256.hpp"
#include "harness/vm/subprocess.hpp"
#include "results/db.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace harness::campaign {
namespace {

namespace fs = std::filesystem;

std::string meta(results::Db& db, const char* key) {
  results::Stmt t(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='campaign_meta'");
  if (!t.step()) return {};
  results::Stmt q(db, "SELECT value FROM campaign_meta WHERE key=?1");
  q.bind(1, key);
  return q.step() ? q.text(0) : std::string{};
}

void put(const fs::path& p, const std::string& text) {
  std::ofstream o(p, std::ios::binary);
  o << text;
  if (!o) throw std::runtime_error("archive: cannot write " + p.string());
}

std::string sql_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("''") : std::string(1, c);
  return o + "'";
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

void require_archive_name(const std::string& out_path) {
  const std::string ext = ".tar.zst";
  const std::string name = fs::path(out_path).filename().string();
  if (name.size() <= ext.size() || name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
    throw std::runtime_error("archive: " + out_path + ": the output name must end in .tar.zst");
}

ArchiveResult write_archive(const std::string& db_path, const std::string& out_path, const std::string& report_dir,
                            const results::Provenance& provenance) {
  if (!fs::exists(db_path)) throw std::runtime_error("archive: database not found: " + db_path);
  require_archive_name(out_path);
  const fs::path out = fs::absolute(out_path);
  if (!hvm::have_program("tar") || !hvm::have_program("zstd"))
    throw std::runtime_error("archive: needs GNU tar and zstd in PATH (harness/scripts/install-deps.sh installs them)");
  fs::create_directories(out.parent_path());

  ArchiveResult r;
  TempDir tmp{out.parent_path() / fmt::format(".{}.staging-{}", out.filename().string(), ::getpid())};
  fs::remove_all(tmp.path);
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  std::string name = provenance.campaign_name.empty() ? meta(db, "name") : provenance.campaign_name;
  if (name.empty()) name = fs::path(db_path).stem().string();
  r.top = name + "-archive";
  const fs::path top = tmp.path / r.top;
  fs::create_directories(top);

  // A consistent copy, whatever is still in the WAL.
  db.exec("VACUUM INTO " + sql_quote((top / "campaign.db").string()));
  r.files.push_back("campaign.db");
  const struct {
    const char* key;
    const char* file;
  } from_meta[] = {{"campaign_yaml", "campaign.yaml"}, {"schedule_json", "plan.json"}, {"schedule_sha256", "plan.sha256"}};
  for (const auto& m : from_meta) {
    std::string v = meta(db, m.key);
    if (v.empty()) {
      r.notes.push_back(fmt::format("campaign_meta.{} is not in the DB: {} says so", m.key, m.file));
      v = fmt::format("# not recorded: campaign_meta.{} is absent from {}\n", m.key, db_path);
    } else if (std::string(m.key) == "schedule_sha256") {
      v += '\n';
    }  // campaign.yaml and plan.json byte for byte: sha256sum plan.json equals plan.sha256
    put(top / m.file, v);
    r.files.push_back(m.file);
  }
  put(top / "build.json", results::provenance_json(provenance) + "\n");
  r.files.push_back("build.json");
  if (!report_dir.empty() && fs::is_directory(report_dir)) {
    fs::copy(report_dir, top / "report", fs::copy_options::recursive);
    std::vector<std::string> rep;
    for (const auto& e : fs::recursive_directory_iterator(top / "report"))
      if (e.is_regular_file()) rep.push_back(fs::relative(e.path(), top).string());
    std::sort(rep.begin(), rep.end());
    r.files.insert(r.files.end(), rep.begin(), rep.end());
  } else {
    r.notes.push_back("no report folder included");
  }
  std::string manifest;
  for (const auto& f : r.files) manifest += harness::digest::sha256_file((top / f).string()) + "  " + f + "\n";
  put(top / "MANIFEST.sha256", manifest);
  r.files.push_back("MANIFEST.sha256");

  const std::string partial = out.string() + ".partial";
  const auto res = hvm::run({"tar", "--zstd", "-cf", partial, "-C", tmp.path.string(), r.top});
  if (res.exit_code != 0) {
    std::error_code ec;
    fs::remove(partial, ec);
    throw std::runtime_error(fmt::format("archive: `tar --zstd -cf {} ...` failed (exit {}): {}", partial,
                                         res.exit_code, res.err));
  }
  fs::rename(partial, out);
  return r;
}

}  // namespace harness::campaign
