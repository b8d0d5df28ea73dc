// Host command runner on harness::kernel::spawn, the one fork/exec (see subprocess.hpp).
#include "harness/vm/subprocess.hpp"

#include "harness/kernel/spawn.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace harness::vm {
namespace {
constexpr std::size_t kMaxCapture = 1 << 20;

std::string tail_lines(const std::string& s, int n) {
  std::size_t pos = s.size();
  while (n-- > 0 && pos > 0) {
    pos = s.rfind('\n', pos - 1);
    if (pos == std::string::npos) return s;
  }
  return s.substr(pos + (pos < s.size() && s[pos] == '\n' ? 1 : 0));
}
}  // namespace

std::string render(const std::vector<std::string>& argv) {
  std::string r;
  for (const auto& a : argv) {
    if (!r.empty()) r += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    if (plain) {
      r += a;
    } else {
      r += '\'';
      for (char c : a) r += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      r += '\'';
    }
  }
  return r;
}

RunResult run(const std::vector<std::string>& argv, const std::string& cwd) {
  if (argv.empty()) throw std::runtime_error("run: empty command");
  harness::kernel::SpawnSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  spec.stdin_to = harness::kernel::ChildStream::null();
  spec.stdout_to = harness::kernel::ChildStream::pipe();
  spec.stderr_to = harness::kernel::ChildStream::pipe();
  auto done = harness::kernel::run_to_exit(spec, kMaxCapture);
  if (!done.start.ok()) throw std::runtime_error(done.start.message());
  return {done.exit_code, std::move(done.out), std::move(done.err)};
}

int run_passthrough(const std::vector<std::string>& argv) {
  harness::kernel::SpawnSpec spec;
  spec.argv = argv;
  const auto done = harness::kernel::run_to_exit(spec, 0);
  return done.start.ok() && done.exit_code >= 0 ? done.exit_code : 127;
}

std::string run_checked(const std::vector<std::string>& argv, const std::string& cwd) {
  RunResult r = run(argv, cwd);
  if (r.exit_code != 0) {
    std::ostringstream m;
    m << "command failed (exit " << r.exit_code << "): " << render(argv);
    std::string t = tail_lines(r.err.empty() ? r.out : r.err, 5);
    if (!t.empty()) m << "\n" << t;
    throw std::runtime_error(m.str());
  }
  return r.out;
}

bool have_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  std::stringstream ss(p);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string f = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st{};
    if (stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(f.c_str(), X_OK) == 0)
      return true;
  }
  return false;
}

int spawn_logged(const std::vector<std::string>& argv, const std::string& log) {
  harness::kernel::SpawnSpec spec;
  spec.argv = argv;
  spec.stdin_to = harness::kernel::ChildStream::null();
  spec.stdout_to = harness::kernel::ChildStream::file(log);
  spec.stderr_to = harness::kernel::ChildStream::same_as_stdout();
  spec.group = harness::kernel::ChildGroup::NewGroup;
  const auto started = harness::kernel::spawn(spec);
  if (!started.ok()) throw std::runtime_error(started.message());
  return started.pid;
}

}  // namespace harness::vm
