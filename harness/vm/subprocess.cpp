// Host command runner: fork/exec with pipes for stdout/stderr (see subprocess.hpp).
#include "harness/vm/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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
  std::vector<char*> args;  // built before fork: no allocation in the child
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
      pipe2(exec_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("run: pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("run: fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      int e = errno;
      (void)!write(exec_pipe[1], &e, sizeof e);
      _exit(127);
    }
    execvp(args[0], args.data());
    int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  bool exec_failed = read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close(exec_pipe[0]);

  RunResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else if (sinks[i]->size() < kMaxCapture) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exec_failed)
    throw std::runtime_error("cannot run '" + argv[0] + "': " + std::strerror(exec_errno));
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

int run_passthrough(const std::vector<std::string>& argv) {
  if (argv.empty()) return 127;
  std::vector<char*> args;  // built before fork: no allocation in the child
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    execvp(args[0], args.data());
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return 127;
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return 127;
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
  if (argv.empty()) throw std::runtime_error("spawn_logged: empty command");
  std::vector<char*> args;  // built before fork: no allocation in the child
  for (const auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("spawn_logged: fork: ") + std::strerror(errno));
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    setpgid(0, 0);
    execvp(args[0], args.data());
    _exit(127);
  }
  return pid;
}

}  // namespace harness::vm
