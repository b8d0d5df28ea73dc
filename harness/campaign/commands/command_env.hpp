#pragma once
// What a campaign command (plan_command.hpp, run_command.hpp, check_command.hpp,
// infra_command.hpp, export_command.hpp) takes from the program that runs it: where its lines
// go, this build, the command line, where local-qemu keeps its built image, and the checked
// opening of a DB the user named; and the outcome every one of them returns. The `harness` CLI fills it (harness/cli/cmd_campaign.cpp:
// harness/cli/open_db.hpp for the two functions); a unit test fills it with its own.
#include "results/db.hpp"
#include "results/provenance.hpp"

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace harness::campaign {

/// What a campaign command concluded (docs/OUTPUTS.md "Exit codes", docs/CI.md). The command says
/// why on env.out and env.err; harness/cli/exit_codes.hpp exit_code_of turns the outcome into
/// the process's exit code, the one place that does.
enum class CommandOutcome {
  ok,             ///< done: planned, run to the end, every assertion passed and every metric within its tolerance
  finding,        ///< ran, and the answer is negative: an assertion failed or a metric regressed (check)
  could_not_run,  ///< refused before anything ran or was stored, or the run could not finish (cases left
                  ///< infra_failed or pending), or the judgement could not compare: nothing was concluded
  inconclusive,   ///< ran, no finding, and some metric's interval decided nothing (check)
};

/// What a campaign command takes from the program that runs it.
struct CommandEnv {
  std::FILE* out = stdout;   ///< what a command reports (the CLI's stdout)
  std::FILE* err = stderr;   ///< refusals and errors (the CLI's stderr)
  results::BuildId build;    ///< this harness build: `pinned_commit: build`, provenance, the baseline's commit
  std::string command_line;  ///< shell-quoted argv, for provenance headers (results/provenance.hpp)
  /// local-qemu's built image folder (<cache>/image) for the same-kernel and pilot-kernel
  /// rules; called only when one of them is applied (finding the cache may create it or throw).
  std::function<std::string()> image_dir;
  /// Opens a campaign DB the user named read-only, after checking it is one; throws an
  /// exception whose what() names the file and holds no SQL (harness/cli/open_db.hpp open_db).
  std::function<std::unique_ptr<results::Db>(const std::string& path)> open_db;
  /// For a DB a command may create: nothing when `path` is missing or empty, else the checks
  /// of open_db; throws as open_db (harness/cli/open_db.hpp check_db_writable_target).
  std::function<void(const std::string& path)> check_target;
};

}  // namespace harness::campaign
