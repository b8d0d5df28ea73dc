// harness::kernel::spawn, the one fork/exec: exit codes, capture, streams, process group and
// session, environment, working directory, kept descriptors, signal dispositions, the held
// start (before_exec), and every failure to start returned as a value with no child left.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "harness/kernel/spawn.hpp"
#include "tmp_tree.hpp"

using namespace harness::kernel;

namespace {

/// True when this process has no child left (none running, none unreaped).
bool no_child_left() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
}

SpawnSpec sh(const std::string& script) {
  SpawnSpec s;
  s.argv = {"sh", "-c", script};
  return s;
}

/// `script` run with stdout and stderr captured (at most 1 MiB each).
RunToExit captured(SpawnSpec s) {
  s.stdout_to = ChildStream::pipe();
  s.stderr_to = ChildStream::pipe();
  return run_to_exit(s, 1 << 20);
}

}  // namespace

TEST(Spawn, ReturnsExitCodesAndSignalsAsAShellDoes) {
  EXPECT_EQ(run_to_exit(sh("exit 0"), 0).exit_code, 0);
  EXPECT_EQ(run_to_exit(sh("exit 3"), 0).exit_code, 3);
  EXPECT_EQ(run_to_exit(sh("kill -9 $$"), 0).exit_code, 128 + 9);
  SpawnSpec path;
  path.argv = {"/bin/sh", "-c", "exit 5"};
  path.search_path = false;
  EXPECT_EQ(run_to_exit(path, 0).exit_code, 5);
  EXPECT_TRUE(no_child_left());
}

TEST(Spawn, CapturesStdoutAndStderrApartAndCapsEach) {
  const auto r = captured(sh("echo out; echo err >&2; exit 4"));
  ASSERT_TRUE(r.start.ok()) << r.start.message();
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.truncated);

  // 200,000 bytes on stdout (more than a pipe holds): the child is not blocked, 1,000 kept.
  SpawnSpec big = sh("head -c 200000 /dev/zero; echo tail >&2");
  big.stdout_to = ChildStream::pipe();
  big.stderr_to = ChildStream::pipe();
  const auto b = run_to_exit(big, 1000);
  EXPECT_EQ(b.exit_code, 0);
  EXPECT_EQ(b.out, std::string(1000, '\0'));
  EXPECT_EQ(b.err, "tail\n");
  EXPECT_TRUE(b.truncated);
}

TEST(Spawn, ExecFailureIsAValueAndLeavesNoChild) {
  SpawnSpec missing;
  missing.argv = {"/nonexistent/program", "arg"};
  const Spawned s = spawn(missing);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.failed, SpawnStep::Exec);
  EXPECT_EQ(s.error, ENOENT);
  EXPECT_EQ(s.pid, -1);
  EXPECT_EQ(s.message(), "cannot start '/nonexistent/program': exec: No such file or directory");
  EXPECT_TRUE(no_child_left());

  SpawnSpec not_in_path;
  not_in_path.argv = {"no-such-program-in-path-7f3a"};
  not_in_path.stdout_to = ChildStream::pipe();  // no descriptor is left open on failure either
  const auto r = run_to_exit(not_in_path, 100);
  EXPECT_EQ(r.start.failed, SpawnStep::Exec);
  EXPECT_EQ(r.start.error, ENOENT);
  EXPECT_EQ(r.start.stdout_fd, -1);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_TRUE(no_child_left());

  const Spawned empty = spawn(SpawnSpec{});
  EXPECT_EQ(empty.failed, SpawnStep::Argv);
  EXPECT_EQ(empty.message(), "cannot start '': empty command: Invalid argument");
}

TEST(Spawn, AFileThatIsNotExecutableIsPermissionDenied) {
  kernel_test::TmpTree t;
  t.put("bin/tool", "#!/bin/sh\nexit 0\n");  // mode 0644: found, not executable
  SpawnSpec s;
  s.argv = {(t.dir() / "bin/tool").string()};
  const Spawned r = spawn(s);
  EXPECT_EQ(r.failed, SpawnStep::Exec);
  EXPECT_EQ(r.error, EACCES);
  ::chmod((t.dir() / "bin/tool").c_str(), 0755);
  const auto ok = run_to_exit(s, 0);
  ASSERT_TRUE(ok.start.ok()) << ok.start.message();
  EXPECT_EQ(ok.exit_code, 0);
}

TEST(Spawn, RunsInTheGivenDirectoryOrReportsChdir) {
  kernel_test::TmpTree t;
  SpawnSpec s = sh("pwd");
  s.cwd = t.dir().string();
  const auto r = captured(s);
  EXPECT_EQ(r.out, std::filesystem::canonical(t.dir()).string() + "\n");

  s.cwd = (t.dir() / "missing").string();
  const auto bad = captured(s);
  EXPECT_EQ(bad.start.failed, SpawnStep::Chdir);
  EXPECT_EQ(bad.start.error, ENOENT);
  EXPECT_EQ(bad.start.message(), "cannot start 'sh': chdir " + s.cwd + ": No such file or directory");
  EXPECT_TRUE(no_child_left());
}

TEST(Spawn, TheEnvironmentIsTheCallersOrExactlyTheGivenOne) {
  ::setenv("HK_SPAWN_TEST", "from-caller", 1);
  EXPECT_EQ(captured(sh("echo \"$HK_SPAWN_TEST\"")).out, "from-caller\n");
  SpawnSpec s = sh("echo \"$HK_SPAWN_TEST|$HOME|$OTHER\"");
  s.env = std::vector<std::string>{"OTHER=given"};
  EXPECT_EQ(captured(s).out, "||given\n");
  ::unsetenv("HK_SPAWN_TEST");
}

TEST(Spawn, StreamsGoToFilesNullOrAPipe) {
  kernel_test::TmpTree t;
  const std::string log = (t.dir() / "log").string();
  t.put("log", "old\n");
  SpawnSpec s = sh("echo one; echo two >&2");
  s.stdout_to = ChildStream::file(log, /*append=*/true);
  s.stderr_to = ChildStream::file(log, /*append=*/true);
  EXPECT_EQ(run_to_exit(s, 0).exit_code, 0);
  EXPECT_EQ(t.get("log"), "old\none\ntwo\n");
  s.stdout_to = ChildStream::file(log);  // truncated
  s.stderr_to = ChildStream::same_as_stdout();  // one file offset: both lines, in order
  EXPECT_EQ(run_to_exit(s, 0).exit_code, 0);
  EXPECT_EQ(t.get("log"), "one\ntwo\n");
  s.stderr_to = ChildStream::null();
  EXPECT_EQ(run_to_exit(s, 0).exit_code, 0);
  EXPECT_EQ(t.get("log"), "one\n");

  s.stdout_to = ChildStream::file((t.dir() / "no-dir/log").string());
  const Spawned bad = spawn(s);
  EXPECT_EQ(bad.failed, SpawnStep::Open);
  EXPECT_EQ(bad.message(), "cannot start 'sh': open " + (t.dir() / "no-dir/log").string() + ": No such file or directory");

  // stdin from /dev/null: cat reads end of file at once.
  SpawnSpec cat;
  cat.argv = {"cat"};
  cat.stdin_to = ChildStream::null();
  EXPECT_EQ(captured(cat).out, "");

  // stdin from a pipe the caller writes.
  cat.stdin_to = ChildStream::pipe();
  cat.stdout_to = ChildStream::pipe();
  Spawned c = spawn(cat);
  ASSERT_TRUE(c.ok()) << c.message();
  ASSERT_EQ(::write(c.stdin_fd, "abc", 3), 3);
  ::close(c.stdin_fd);
  char buf[16] = {};
  EXPECT_EQ(::read(c.stdout_fd, buf, sizeof buf), 3);
  EXPECT_EQ(std::string(buf), "abc");
  ::close(c.stdout_fd);
  EXPECT_EQ(wait_exit_code(c.pid), 0);
}

TEST(Spawn, NewGroupAndNewSession) {
  // `read` blocks on the stdin pipe until it is closed: the child is alive while we look.
  SpawnSpec s = sh("read x; exit 0");
  s.stdin_to = ChildStream::pipe();
  Spawned same = spawn(s);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(::getpgid(same.pid), ::getpgrp());
  ::close(same.stdin_fd);
  wait_exit_code(same.pid);

  s.group = ChildGroup::NewGroup;
  Spawned group = spawn(s);
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(::getpgid(group.pid), group.pid);  // already when spawn() returns
  EXPECT_EQ(::getsid(group.pid), ::getsid(0));
  EXPECT_EQ(::kill(-group.pid, SIGTERM), 0);  // the group can be signalled at once
  EXPECT_EQ(wait_exit_code(group.pid), 128 + SIGTERM);
  ::close(group.stdin_fd);

  s.group = ChildGroup::NewSession;
  Spawned session = spawn(s);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(::getsid(session.pid), session.pid);
  EXPECT_EQ(::getpgid(session.pid), session.pid);
  ::close(session.stdin_fd);
  EXPECT_EQ(wait_exit_code(session.pid), 0);
}

TEST(Spawn, KeepsOnlyTheDescriptorsItIsTold) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  const std::string script = "echo kept >&" + std::to_string(p[1]);
  EXPECT_NE(run_to_exit(sh("exec 2>/dev/null; " + script), 0).exit_code, 0);  // close-on-exec: gone
  SpawnSpec s = sh(script);
  s.keep_fds = {p[1]};
  EXPECT_EQ(run_to_exit(s, 0).exit_code, 0);
  EXPECT_EQ(::fcntl(p[1], F_GETFD), FD_CLOEXEC);  // cleared in the child only
  ::close(p[1]);
  char buf[16] = {};
  EXPECT_EQ(::read(p[0], buf, sizeof buf), 5);
  EXPECT_EQ(std::string(buf), "kept\n");
  ::close(p[0]);
}

TEST(Spawn, DefaultSignalsUndoesTheCallersIgnoredSignals) {
  struct sigaction ign{}, old{};
  ign.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGUSR1, &ign, &old), 0);
  const SpawnSpec inherit = sh("kill -USR1 $$; exit 0");
  EXPECT_EQ(run_to_exit(inherit, 0).exit_code, 0);  // ignored, as the caller does
  SpawnSpec dfl = inherit;
  dfl.default_signals = true;
  EXPECT_EQ(run_to_exit(dfl, 0).exit_code, 128 + SIGUSR1);
  ::sigaction(SIGUSR1, &old, nullptr);
}

TEST(Spawn, BeforeExecSeesTheChildBeforeItRunsTheProgram) {
  kernel_test::TmpTree t;
  const std::string marker = (t.dir() / "ran").string();
  SpawnSpec s = sh("touch " + marker);
  std::string exe_in_hook;
  pid_t seen = -1;
  s.before_exec = [&](pid_t pid) {
    seen = pid;
    exe_in_hook = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe").string();
    EXPECT_FALSE(std::filesystem::exists(marker));
  };
  const Spawned r = spawn(s);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(seen, r.pid);
  EXPECT_EQ(exe_in_hook, std::filesystem::read_symlink("/proc/self/exe").string());  // still this program
  EXPECT_EQ(wait_exit_code(r.pid), 0);
  EXPECT_TRUE(std::filesystem::exists(marker));
}

TEST(Spawn, AThrowingBeforeExecKillsTheChildAndPropagates) {
  kernel_test::TmpTree t;
  const std::string marker = (t.dir() / "ran").string();
  SpawnSpec s = sh("touch " + marker);
  s.before_exec = [](pid_t) { throw std::runtime_error("cannot place it"); };
  EXPECT_THROW(spawn(s), std::runtime_error);
  EXPECT_TRUE(no_child_left());
  EXPECT_FALSE(std::filesystem::exists(marker));

  // A held child whose program cannot be executed: the exec failure comes back as a value.
  SpawnSpec missing;
  missing.argv = {"/nonexistent/program"};
  bool called = false;
  missing.before_exec = [&](pid_t) { called = true; };
  const Spawned m = spawn(missing);
  EXPECT_TRUE(called);
  EXPECT_EQ(m.failed, SpawnStep::Exec);
  EXPECT_EQ(m.error, ENOENT);
  EXPECT_TRUE(no_child_left());
}
