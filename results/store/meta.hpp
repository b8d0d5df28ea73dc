#pragma once
// campaign_meta (results/schema.sql): the campaign DB's key/value record. Keys written by the
// harness: name, kind, seed, campaign_file, campaign_dir, campaign_yaml, campaign_sha256,
// schedule_json, schedule_sha256 (the preregistration), planned_unix_ns, db_tag
// (harness/campaign/store/plan_store.hpp), and unusable:<vm> (below). A case bundle's is empty.
//
// Errors: DbError on any SQLite failure, a file without the table included (callers that
// read files of every version test results::has_table first).
#include "results/db.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace results {

/// The value of `key`; nullopt when there is no such key.
std::optional<std::string> meta_value(Db& db, const std::string& key);

/// Every key and its value.
std::map<std::string, std::string> meta_map(Db& db);

/// SQLite's json_extract(value, `json_path`) of key `key`'s value, read as an integer
/// (SQLite's conversion: true -> 1, a number truncated, a numeric text parsed); nullopt when
/// the key, or the path in its JSON, is absent or null.
std::optional<std::int64_t> meta_json_int(Db& db, const std::string& key, const std::string& json_path);

/// Sets `key` to `value` (insert or replace).
void put_meta(Db& db, const std::string& key, const std::string& value);

/// The VMs marked unusable after an unclean restoration (key unusable:<vm>), as (vm, why) in
/// key order.
std::vector<std::pair<std::string, std::string>> unusable_marks(Db& db);

/// Marks VM `vm` unusable because of `why` (key unusable:<vm>).
void put_unusable_mark(Db& db, const std::string& vm, const std::string& why);

/// Removes the unusable mark of `vm`. A read first: a VM without a mark (the usual case)
/// costs no write (a DELETE that matches nothing still takes SQLite's write lock and commits).
void clear_unusable_mark(Db& db, const std::string& vm);

}  // namespace results
