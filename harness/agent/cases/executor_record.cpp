// The executor's record on disk (see executor_record.hpp).
#include "harness/agent/cases/executor_record.hpp"

#include "harness/case/run/durable_file.hpp"
#include "harness/agent/http/json_text.hpp"
#include "harness/agent/routes/reboot.hpp"
#include "harness/agent/cases/registry.hpp"
#include "harness/json/limited_parse.hpp"

#include <nlohmann/json.hpp>
#include <signal.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::agent {
using nlohmann::json;

std::optional<ProcStat> proc_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto rp = text.rfind(')');  // the command name may hold spaces and parentheses
  if (!in.good() && text.empty()) return std::nullopt;
  if (rp == std::string::npos || rp + 2 > text.size()) return std::nullopt;
  std::istringstream rest(text.substr(rp + 2));
  ProcStat s;
  long ppid = 0;
  std::string skip;
  if (!(rest >> s.state >> ppid >> s.pgrp)) return std::nullopt;
  for (int field = 6; field < 22; ++field) rest >> skip;  // session .. itrealvalue
  if (!(rest >> s.start_ticks)) return std::nullopt;
  return s;
}

ExecutorRecord record_of(pid_t pid) {
  ExecutorRecord r;
  r.pid = pid;
  r.boot_id = boot_id();
  if (const auto s = proc_stat(pid)) r.start_ticks = s->start_ticks;
  return r;
}

void write_executor_record(const fs::path& case_dir, const ExecutorRecord& r) {
  harness::case_::write_file_durably(case_dir / "executor.json",
                     dump(json{{"pid", r.pid}, {"boot_id", r.boot_id}, {"start_ticks", r.start_ticks}}, 2) + "\n");
}

std::optional<ExecutorRecord> read_executor_record(const fs::path& case_dir) {
  const fs::path file = case_dir / "executor.json";
  const auto text = harness::case_::read_small_file(file, kStateFileMax);
  if (!text) return std::nullopt;
  const json j = harness::json::parse_or_discarded(*text);
  if (!j.is_object() || !j.contains("pid") || !j["pid"].is_number_integer() || j["pid"].get<long long>() <= 0)
    throw std::runtime_error(file.string() + ": not a JSON object with a positive integer \"pid\"");
  ExecutorRecord r;
  r.pid = static_cast<pid_t>(j["pid"].get<long long>());
  r.boot_id = str_or(j, "boot_id", "");
  if (j.contains("start_ticks") && j["start_ticks"].is_number_unsigned()) r.start_ticks = j["start_ticks"].get<std::uint64_t>();
  return r;
}

bool group_alive(const ExecutorRecord& r) {
  if (r.pid <= 0 || r.boot_id != boot_id()) return false;
  if (::kill(-r.pid, 0) != 0 && errno == ESRCH) return false;
  const auto leader = proc_stat(r.pid);
  if (leader && leader->state != 'Z' && leader->pgrp == r.pid && r.start_ticks != 0 &&
      leader->start_ticks != r.start_ticks)
    return false;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto s = proc_stat(static_cast<pid_t>(std::stol(name)));
    if (s && s->pgrp == r.pid && s->state != 'Z' && s->state != 'X') return true;
  }
  return false;
}

}  // namespace harness::agent
