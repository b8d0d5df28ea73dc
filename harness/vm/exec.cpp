// One-shot guest run (see exec.hpp).
#include "harness/vm/exec.hpp"

#include "harness/vm/data_disk.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/image.hpp"
#include "harness/vm/init_script.hpp"
#include "harness/vm/paths.hpp"
#include "harness/vm/qemu.hpp"
#include "harness/vm/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;

namespace harness::vm {

namespace {

/// A fresh work directory under the cache with a copy of the base data disk holding the
/// script. Returns the work directory; `disk` gets the disk's path.
fs::path prepare_disk(const ExecOptions& opts, const Image& img, std::string& disk) {
  fs::path work = fs::path(cache_root(opts.cache_dir)) / "exec" /
                  (std::to_string(getpid()) + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  fs::create_directories(work);
  fs::create_directories(opts.collect_dir);
  disk = (work / "disk.img").string();
  copy_disk(img.disk_base, disk);
  std::string script_copy = (work / "script.sh").string();
  fs::copy_file(opts.script, script_copy);
  disk_write(disk, script_copy, disk_path_of(guest::kExecScript), 0755);
  return work;
}

/// The qemu configuration of the one-shot guest (the accelerator chosen and printed here).
QemuConfig exec_config(const ExecOptions& opts, const Image& img, const fs::path& work, const std::string& disk) {
  QemuConfig qc;
  qc.name = "exec";
  qc.vmlinuz = img.vmlinuz;
  qc.initramfs = img.initramfs;
  qc.disk = disk;
  qc.console_log = (work / "console.log").string();
  qc.mode = "exec";
  qc.vcpus = opts.vcpus;
  qc.memory_mib = opts.memory_mib;
  qc.swapfile_mib = opts.swapfile_mib;
  AccelRequest req;
  req.requested = opts.accelerator;
  req.vmlinuz = img.vmlinuz;
  req.cache_dir = cache_root(opts.cache_dir);
  const AccelChoice accel = choose_accelerator(req);
  std::fprintf(stderr, "%s\n", accel.message().c_str());
  qc.accelerator = accel.accelerator;
  qc.user_network = opts.network;
  qc.extra_cmdline = opts.extra_cmdline;
  return qc;
}

/// Runs qemu (`argv`) until it exits or `timeout_s` passes (then it is killed:
/// res.timed_out); sets res.seconds and returns qemu's wait status.
int run_guest(const std::vector<std::string>& argv, const fs::path& work, int timeout_s, ExecResult& res) {
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = spawn_logged(argv, (work / "qemu.log").string());
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (el > timeout_s) {
      res.timed_out = true;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return status;
}

/// The script's status and /out's contents from the data disk into opts.collect_dir.
void collect(const ExecOptions& opts, const std::string& disk, const fs::path& work, ExecResult& res) {
  if (disk_exists(disk, disk_path_of(guest::kExecStatus))) {
    try {
      res.script_status = std::stoi(disk_cat(disk, disk_path_of(guest::kExecStatus)));
    } catch (const std::exception&) {
      res.script_status = -1;
    }
  }
  fs::path dump = work / "rdump";
  const std::string out_on_disk = disk_path_of(guest::kOutDir);
  if (disk_exists(disk, out_on_disk)) {
    disk_rdump(disk, out_on_disk, dump.string());
    for (const auto& e : fs::directory_iterator(dump / fs::path(out_on_disk).filename())) {
      fs::path dst = fs::path(opts.collect_dir) / e.path().filename();
      fs::remove_all(dst);
      fs::rename(e.path(), dst);
    }
  }
}

}  // namespace

ExecResult exec_once(const ExecOptions& opts) {
  if (!fs::is_regular_file(opts.script))
    throw std::runtime_error("--script: no such file: " + opts.script);
  if (opts.collect_dir.empty()) throw std::runtime_error("--collect: directory required");
  if (opts.timeout_s <= 0) throw std::runtime_error("--timeout-s must be > 0");
  Image img = load_image(opts.cache_dir);
  std::string disk;
  const fs::path work = prepare_disk(opts, img, disk);
  const QemuConfig qc = exec_config(opts, img, work, disk);
  ExecResult res;
  res.accelerator = qc.accelerator;
  const auto argv = qemu_argv(qc);
  const int status = run_guest(argv, work, opts.timeout_s, res);
  res.console_log = (fs::path(opts.collect_dir) / "console.log").string();
  fs::copy_file(qc.console_log, res.console_log, fs::copy_options::overwrite_existing);
  std::string qlog = read_file((work / "qemu.log").string());
  if (!res.timed_out && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
    throw std::runtime_error("qemu failed (" + render(argv) + "): " + qlog);
  collect(opts, disk, work, res);
  fs::remove_all(work);
  return res;
}

}  // namespace harness::vm
