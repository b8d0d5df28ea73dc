// `harness export` (export_command.hpp).
#include "harness/campaign/commands/export_command.hpp"

#include "harness/campaign/store/export.hpp"

#include <filesystem>

namespace harness::campaign {

std::string default_export_dir(const std::string& db_path) {
  const std::filesystem::path p(db_path);
  return (p.parent_path() / p.stem()).string() + "-csv";
}

CommandOutcome export_command(results::Db& db, const std::string& db_path, const std::string& out_dir,
                              const CommandEnv& env) {
  const std::string dir = out_dir.empty() ? default_export_dir(db_path) : out_dir;
  const auto prov = results::collect_provenance(db, env.build, env.command_line);
  for (const auto& f : export_csv(db, dir, &prov)) std::fprintf(env.out, "%s\n", f.c_str());
  return CommandOutcome::ok;
}

}  // namespace harness::campaign
