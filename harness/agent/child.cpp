// Executor child process handling (see child.hpp).
#include "harness/agent/child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace harness::agent {

pid_t spawn_child(const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) throw std::runtime_error("spawn: empty command");
  // argv is built before fork: no allocation between fork and exec (the agent is threaded)
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) != 0) throw std::runtime_error("spawn: pipe failed");
  pid_t pid = fork();
  if (pid < 0) {
    close(ep[0]);
    close(ep[1]);
    throw std::runtime_error(std::string("spawn: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execvp(args[0], args.data());
    int e = errno;
    (void)!write(ep[1], &e, sizeof e);
    _exit(127);
  }
  close(ep[1]);
  int e = 0;
  ssize_t n = read(ep[0], &e, sizeof e);
  close(ep[0]);
  if (n == sizeof e) {
    waitpid(pid, nullptr, 0);
    throw std::runtime_error("cannot start '" + argv[0] + "': " + std::strerror(e));
  }
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void signal_child(pid_t pid, int sig) {
  if (pid <= 0) return;
  if (kill(-pid, sig) != 0) kill(pid, sig);
}

std::vector<std::string> split_command(const std::string& cmd) {
  std::vector<std::string> r;
  std::stringstream ss(cmd);
  std::string w;
  while (ss >> w) r.push_back(w);
  return r;
}

}  // namespace harness::agent
