// The case's workload processes (children.hpp).
#include "harness/case/host/children.hpp"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "harness/kernel/fs.hpp"

namespace harness::case_ {

Children::Children(std::string work_dir) : work_dir_(std::move(work_dir)) {}

const ChildRecord& Children::spawn(const std::string& name, const std::vector<std::string>& argv,
                                   const harness::kernel::Cgroup& cg) {
  ChildRecord c;
  c.name = name;
  c.argv = argv;
  c.stdout_path = (std::filesystem::path(work_dir_) / (name + ".stdout")).string();
  c.stderr_path = (std::filesystem::path(work_dir_) / (name + ".stderr")).string();
  c.pid = spawn_in_cgroup(cg, {argv, c.stdout_path, c.stderr_path});
  c.spawned_ns = harness::kernel::monotonic_ns();
  children_.push_back(c);
  return children_.back();
}

ChildRecord* Children::find(const std::string& name) {
  for (auto& c : children_)
    if (c.name == name) return &c;
  return nullptr;
}

void Children::term(ChildRecord& c) const {
  ::kill(c.pid, SIGTERM);
  if (!c.term_ns) c.term_ns = harness::kernel::monotonic_ns();
}

void Children::reap(ChildRecord& c, std::int64_t timeout_ns) const {
  if (!c.exit) c.exit = wait_for_exit(c.pid, timeout_ns);
}

void Children::end_of_schedule(bool stopped, std::int64_t deadline_ns) {
  for (auto& c : children_) {
    if (stopped && !c.term_ns) term(c);
    reap(c, std::max<std::int64_t>(0, deadline_ns - harness::kernel::monotonic_ns()));
  }
}

std::string read_output(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string s(max_bytes, '\0');
  in.read(s.data(), static_cast<std::streamsize>(max_bytes));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

}  // namespace harness::case_
