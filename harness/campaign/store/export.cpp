// CSV export of the campaign DB (see export.hpp).
#include "harness/campaign/store/export.hpp"

#include "results/db.hpp"
#include "results/csv.hpp"
#include "results/store/export_tables.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

namespace harness::campaign {

std::vector<std::string> export_csv(results::Db& db, const std::string& out_dir, const results::Provenance* provenance) {
  std::filesystem::create_directories(out_dir);
  std::vector<std::string> written;
  for (const auto& name : results::export_table_names()) {
    const std::string path = (std::filesystem::path(out_dir) / (name + ".csv")).string();
    std::ofstream o(path);
    if (!o) throw std::runtime_error(path + ": cannot write");
    const auto header = [&](const std::vector<std::string>& columns) {
      for (std::size_t i = 0; i < columns.size(); ++i) o << (i ? "," : "") << results::csv_field(columns[i]);
      o << "\n";
    };
    const auto row = [&](const std::vector<std::optional<std::string>>& cells) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (i) o << ',';
        if (cells[i]) o << results::csv_field(*cells[i]);
      }
      o << "\n";
    };
    results::read_export_table(db, name, header, row);
    if (!o) throw std::runtime_error(path + ": write failed");
    if (provenance) results::write_sidecar(path, *provenance);
    written.push_back(path);
  }
  return written;
}

}  // namespace harness::campaign
