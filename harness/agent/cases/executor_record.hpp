#pragma once
// The executor's record on disk: <state-dir>/cases/<id>/executor.json {"pid", "boot_id",
// "start_ticks"}, written when the executor starts, so that an agent started later (after
// a crash of the one that ran the case) can tell whether that executor's process group
// still lives (restart_settling.hpp). The pid is also the group id (child.hpp).
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace harness::agent {

struct ExecutorRecord {
  pid_t pid = -1;               ///< the executor's pid = its process-group id
  std::string boot_id;          ///< /proc/sys/kernel/random/boot_id when it started
  std::uint64_t start_ticks = 0;  ///< its start time, clock ticks after boot (/proc/<pid>/stat field 22); 0 = unknown
};

/// The fields of /proc/<pid>/stat that the record needs.
struct ProcStat {
  char state = '?';  ///< R, S, D, Z, ...
  pid_t pgrp = -1;
  std::uint64_t start_ticks = 0;
};

/// /proc/<pid>/stat of `pid`, or nullopt when the process does not exist (or the file
/// cannot be parsed).
std::optional<ProcStat> proc_stat(pid_t pid);

/// The record of the running process `pid` now (its boot id and start time).
ExecutorRecord record_of(pid_t pid);

/// Writes `r` to <case_dir>/executor.json durably (write_file_durably). Throws
/// std::runtime_error naming the file.
void write_executor_record(const std::filesystem::path& case_dir, const ExecutorRecord& r);

/// The record in <case_dir>/executor.json, or nullopt when there is none. Throws
/// std::runtime_error naming the file when it is unreadable, not a JSON object or has no
/// positive integer "pid".
std::optional<ExecutorRecord> read_executor_record(const std::filesystem::path& case_dir);

/// True when the process group of `r` still has a live (non-zombie) member in this boot:
/// false when the boot id differs, when no process is in the group, or when the group's
/// leader is alive but started at another time than recorded (the pid was reused by a
/// process that made its own group: not the executor).
bool group_alive(const ExecutorRecord& r);

}  // namespace harness::agent
