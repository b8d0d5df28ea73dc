// Column presence (see db_columns.hpp).
#include "analysis/db_columns.hpp"

namespace analysis {

bool has_column(results::Db& db, const std::string& table, const std::string& column) {
  results::Stmt st(db, "SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = ?2");
  st.bind(1, table).bind(2, column);
  return st.step() && st.int64(0) > 0;
}

bool has_table(results::Db& db, const std::string& table) {
  results::Stmt st(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1");
  st.bind(1, table);
  return st.step() && st.int64(0) > 0;
}

}  // namespace analysis
