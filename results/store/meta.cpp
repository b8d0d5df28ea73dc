// campaign_meta (see meta.hpp).
#include "results/store/meta.hpp"

namespace results {
namespace {
/// The key of VM `vm`'s unusable mark.
std::string unusable_key(const std::string& vm) { return "unusable:" + vm; }
}  // namespace

std::optional<std::string> meta_value(Db& db, const std::string& key) {
  Stmt q(db, "SELECT value FROM campaign_meta WHERE key = ?1");
  q.bind(1, key);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

std::map<std::string, std::string> meta_map(Db& db) {
  std::map<std::string, std::string> out;
  Stmt q(db, "SELECT key, value FROM campaign_meta");
  while (q.step()) out[q.text(0)] = q.text(1);
  return out;
}

std::optional<std::int64_t> meta_json_int(Db& db, const std::string& key, const std::string& json_path) {
  Stmt q(db, "SELECT json_extract(value, ?2) FROM campaign_meta WHERE key = ?1");
  q.bind(1, key).bind(2, json_path);
  if (!q.step() || q.is_null(0)) return std::nullopt;
  return q.int64(0);
}

void put_meta(Db& db, const std::string& key, const std::string& value) {
  Stmt q(db, "INSERT OR REPLACE INTO campaign_meta(key, value) VALUES (?1, ?2)");
  q.bind(1, key).bind(2, value);
  q.run();
}

std::vector<std::pair<std::string, std::string>> unusable_marks(Db& db) {
  std::vector<std::pair<std::string, std::string>> out;
  Stmt q(db, "SELECT substr(key, 10), value FROM campaign_meta WHERE key LIKE 'unusable:%' ORDER BY key");
  while (q.step()) out.emplace_back(q.text(0), q.text(1));
  return out;
}

void put_unusable_mark(Db& db, const std::string& vm, const std::string& why) { put_meta(db, unusable_key(vm), why); }

void clear_unusable_mark(Db& db, const std::string& vm) {
  if (!meta_value(db, unusable_key(vm))) return;
  Stmt q(db, "DELETE FROM campaign_meta WHERE key = ?1");
  q.bind(1, unusable_key(vm)).run();
}

}  // namespace results
