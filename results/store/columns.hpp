#pragma once
// How a row struct of the store maps to the columns of its table (results/schema.sql): one list
// per table, {column name, member, presence}, from which the store builds its SELECT and INSERT
// lists and reads and binds a row. A column is added to a row by one line of that list (and the
// member). The store's own machinery: nothing outside results/store includes it.
//
// Presence (ours): a column the schema has had since version 1 is `always` and is selected by
// name, so a file without it is refused (DbError "no such column", naming file and statement);
// a column a later version added is `added` and reads as NULL from a file written before it
// (results/schema.sql: NULL means "not measured", never zero). Read-only opens never convert a
// file, so a reader meets every earlier version.
#include "results/db.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace results::store_columns {

enum class Presence { always, added };

/// One column of a table and the member of `Row` that holds it.
template <class Row>
struct Column {
  using Member = std::variant<std::string Row::*, std::optional<std::string> Row::*, std::int64_t Row::*,
                              std::optional<std::int64_t> Row::*>;
  const char* name;
  Member member;
  Presence presence = Presence::always;
};

/// "a, b, NULL, d": the columns of `cols` for a SELECT from `table` of `db`, each prefixed with
/// `prefix` ("c." or ""); an `added` column the file's table lacks is NULL. Throws DbError.
template <class Row>
std::string select_list(Db& db, const std::string& table, const std::vector<Column<Row>>& cols,
                        const std::string& prefix = "") {
  const std::vector<std::string> have = table_columns(db, "main", table);
  std::string out;
  for (const auto& c : cols) {
    const bool present = c.presence == Presence::always || std::find(have.begin(), have.end(), c.name) != have.end();
    out += (out.empty() ? "" : ", ") + (present ? prefix + c.name : std::string("NULL"));
  }
  return out;
}

/// "INSERT INTO `table`(a, b, ...) VALUES (?1, ?2, ...)" over `cols`, after `lead` leading
/// columns (bound by the caller as ?1..?lead; e.g. the case id or key); with `replace`, INSERT OR
/// REPLACE (a row with the same key is replaced).
template <class Row>
std::string insert_sql(const std::string& table, const std::vector<std::string>& lead,
                       const std::vector<Column<Row>>& cols, bool replace = false) {
  std::string names, values;
  int i = 0;
  auto add = [&](const std::string& n) {
    names += (i ? ", " : "") + n;
    values += (i ? ", ?" : "?") + std::to_string(i + 1);
    ++i;
  };
  for (const auto& n : lead) add(n);
  for (const auto& c : cols) add(c.name);
  return std::string(replace ? "INSERT OR REPLACE INTO " : "INSERT INTO ") + table + "(" + names + ") VALUES (" + values + ")";
}

/// The current row of `q`, columns from `first` on in the order of `cols`, into `row`.
template <class Row>
void read_row(const Stmt& q, int first, const std::vector<Column<Row>>& cols, Row& row) {
  int i = first;
  for (const auto& c : cols) {
    std::visit(
        [&](auto m) {
          using T = std::remove_reference_t<decltype(row.*m)>;
          if constexpr (std::is_same_v<T, std::string>) row.*m = q.text(i);
          else if constexpr (std::is_same_v<T, std::optional<std::string>>) row.*m = q.opt_text(i);
          else if constexpr (std::is_same_v<T, std::int64_t>) row.*m = q.int64(i);
          else row.*m = q.opt_int64(i);
        },
        c.member);
    ++i;
  }
}

/// Binds `row`'s members in the order of `cols` to parameters `first`, `first` + 1, ...
/// (an empty optional: NULL).
template <class Row>
void bind_row(Stmt& q, int first, const std::vector<Column<Row>>& cols, const Row& row) {
  int i = first;
  for (const auto& c : cols) {
    std::visit([&](auto m) { q.bind(i, row.*m); }, c.member);
    ++i;
  }
}

}  // namespace results::store_columns
