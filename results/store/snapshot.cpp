// A consistent copy of a results DB file (see snapshot.hpp).
#include "results/store/snapshot.hpp"

namespace results {

void copy_db_file(Db& db, const std::string& path) {
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  db.exec("VACUUM INTO " + quoted + "'");
}

}  // namespace results
