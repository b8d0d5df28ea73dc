// Accelerator choice by what the host says, then a trial boot (see accel.hpp).
#include "harness/vm/accel.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/digest/sha256.hpp"

#include "harness/vm/paths.hpp"
#include "harness/vm/qemu.hpp"
#include "harness/vm/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace harness::vm {
namespace {

constexpr const char* kBanner = "Linux version";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

struct ProbeResult {
  bool ok = false;
  std::string detail;
};

/// Boots `vmlinuz` under KVM with the same machine and CPU model as real guests and
/// waits for the kernel banner on the serial console.
ProbeResult probe_kvm(const AccelRequest& req) {
  if (req.vmlinuz.empty() || !fs::exists(req.vmlinuz))
    throw std::runtime_error("KVM probe: guest kernel '" + req.vmlinuz +
                             "' not found (build the guest image first: harness vm image)");
  char tmpl[] = "/tmp/harness-accel-probe.XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error(std::string("KVM probe: mkdtemp: ") + std::strerror(errno));
  const fs::path dir(tmpl);
  const fs::path console = dir / "console.log", log = dir / "qemu.log";
  const std::vector<std::string> argv = {req.qemu, "-machine", "q35", "-accel", "kvm", "-cpu", "host",
                                         "-smp", "1", "-m", "256", "-kernel", req.vmlinuz,
                                         "-append", "console=ttyS0 panic=-1",
                                         "-display", "none", "-monitor", "none",
                                         "-serial", "file:" + console.string(), "-nic", "none", "-no-reboot"};
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = spawn_logged(argv, log.string());
  ProbeResult r;
  int status = 0;
  bool exited = false;
  for (;;) {
    const std::string out = slurp(console);
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (out.find(kBanner) != std::string::npos) {
      r.ok = true;
      char buf[96];
      std::snprintf(buf, sizeof buf, "KVM probe printed the kernel banner after %.1f s", el);
      r.detail = buf;
      break;
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      const std::string err = last_line(slurp(log));
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      r.detail = "KVM probe: qemu exited with status " + std::to_string(code) + " after " +
                 std::to_string(static_cast<int>(el)) + " s before the kernel banner" +
                 (err.empty() ? std::string() : ": " + err);
      break;
    }
    if (el > req.timeout_s) {
      r.detail = "KVM probe: the guest printed " +
                 (out.empty() ? std::string("nothing") : std::to_string(out.size()) + " bytes but no kernel banner") +
                 " on the serial console within " + std::to_string(req.timeout_s) + " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!exited) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

ProbeKey cache_key(const AccelRequest& req) {
  ProbeKey k;
  k.boot = first_line(slurp("/proc/sys/kernel/random/boot_id"));
  try {
    k.qemu = first_line(run({req.qemu, "--version"}).out);
  } catch (const std::exception& e) {
    throw std::runtime_error("KVM probe: cannot run " + req.qemu + " --version: " + e.what());
  }
  k.kvm_device = req.kvm_device;
  // The kernel by content: every cache root holds its own copy of the same vmlinuz.
  k.kernel_sha256 = req.vmlinuz;
  try {
    k.kernel_sha256 = harness::digest::sha256_file(req.vmlinuz);
  } catch (const std::exception&) {
    // unreadable: keyed by path; the probe itself names the missing kernel
  }
  return k;
}

/// The whole file, or nullopt when it cannot be opened or read (EISDIR, EACCES, EIO, ...).
std::optional<std::string> read_whole(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string s;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    s.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return s;
}

bool writable_dir(const fs::path& d) {
  std::error_code ec;
  fs::create_directories(d, ec);
  return fs::is_directory(d, ec) && ::access(d.c_str(), W_OK | X_OK) == 0;
}

}  // namespace

std::string ProbeKey::text() const {
  return host + "|" + boot + "|" + hypervisor + "|" + qemu + "|" + kvm_device + "|" + kernel_sha256;
}

std::string ProbeKey::file_name() const {
  return "accel-probe-" + harness::digest::sha256_hex(text()).substr(0, 16) + ".json";
}

std::optional<ProbeVerdict> read_probe_verdict(const std::string& file, const ProbeKey& key) {
  std::error_code ec;
  if (file.empty() || !fs::exists(file, ec)) return std::nullopt;
  try {
    const auto j = harness::json::parse(slurp(file), file);
    if (j.value("key", "") != key.text()) return std::nullopt;
    ProbeVerdict v;
    v.kvm_ok = j.at("kvm_ok").get<bool>();
    v.detail = j.at("detail").get<std::string>();
    v.trial_s = j.value("trial_s", -1.0);
    v.measured_unix = j.value("measured_unix", std::int64_t{0});
    return v;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable cache: probe again
  }
}

void write_probe_verdict(const std::string& file, const ProbeKey& key, const ProbeVerdict& v) {
  if (file.empty()) return;
  try {
    std::error_code ec;
    fs::create_directories(fs::path(file).parent_path(), ec);
    const std::string tmp = file + ".tmp." + std::to_string(::getpid());
    write_file(tmp, nlohmann::json{{"key", key.text()}, {"kvm_ok", v.kvm_ok}, {"detail", v.detail},
                                   {"trial_s", v.trial_s}, {"measured_unix", v.measured_unix}}.dump(2) + "\n");
    fs::rename(tmp, file);
  } catch (const std::exception&) {
    // a cache that cannot be written only costs a probe next time
  }
}

std::string AccelChoice::message() const {
  std::string m = "accelerator: " + accelerator + " (" + reason + (from_cache ? "; cached probe result" : "") + ")";
  if (accelerator == "tcg") m += "\n" + tcg_warning();
  return m;
}

std::string accel_request(const std::string& value, const std::string& source) {
  if (value.empty() || value == "auto" || value == "kvm" || value == "tcg") return value;
  throw AccelError(source + ": accelerator '" + value + "' is not one of auto, kvm, tcg");
}

std::string effective_accel_request(const std::string& flag, const std::string& campaign) {
  if (!accel_request(flag, "--accel").empty()) return flag;
  const char* env = std::getenv("HARNESS_ACCEL");
  if (env && *env) return accel_request(env, "environment variable HARNESS_ACCEL");
  if (!accel_request(campaign, "campaign provider.accelerator").empty()) return campaign;
  return "auto";
}

std::string machine_probe_dir() {
  const char* env = std::getenv("HARNESS_ACCEL_PROBE_DIR");
  if (env && *env) return env;
  const fs::path run = "/run/reclaim-harness";
  if (writable_dir(run)) return run.string();
  return "/tmp/reclaim-harness-" + std::to_string(::getuid());
}

Checked check_kvm_host(const std::string& root) {
  const fs::path base = root.empty() ? fs::path("/") : fs::path(root);
  std::error_code ec;
  const fs::path pvm = base / "sys/module/kvm_pvm";
  if (fs::exists(pvm, ec))
    return problem("/dev/kvm is nested PVM: a stock guest kernel cannot run under it (" + pvm.string() +
                   " exists; PVM runs only CONFIG_PVM_GUEST kernels booted directly in 64-bit mode, not qemu's firmware "
                   "path)");
  const fs::path cpuinfo = base / "proc/cpuinfo";
  const auto text = read_whole(cpuinfo);
  if (!text) return {};  // unreadable: unknown, not "no flags"
  bool any_flags = false;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    if (key != "flags") continue;  // not "vmx flags" and the like
    any_flags = true;
    std::istringstream words(line.substr(colon + 1));
    std::string w;
    while (words >> w)
      if (w == "vmx" || w == "svm") return {};
  }
  if (!any_flags) return {};  // no flags line at all: unknown
  return problem("/dev/kvm is present but the CPU has no vmx or svm flag: the flags lines of " + cpuinfo.string() +
                 " carry neither, so KVM cannot run a stock guest here");
}

AccelChoice choose_accelerator(const AccelRequest& req) {
  const std::string want = effective_accel_request(req.requested);
  AccelChoice c;
  if (want == "tcg") {
    c.accelerator = "tcg";
    c.reason = "tcg requested";
    return c;
  }
  const int fd = ::open(req.kvm_device.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    const std::string why = req.kvm_device + ": " + std::strerror(errno);
    if (want == "kvm") throw AccelError("--accel kvm: " + why + " (use --accel tcg or auto)");
    c.accelerator = "tcg";
    c.reason = "auto: " + why;
    return c;
  }
  ::close(fd);

  // What the host says before any probe (no boot, no cache: reading it costs nothing).
  if (const auto host = check_kvm_host(req.host_root); !host) {
    const std::string& why = host.error().message;
    if (want == "kvm") throw AccelError("--accel kvm: " + why + " (use --accel tcg or auto)");
    c.accelerator = "tcg";
    c.reason = "auto: " + why + "; using TCG";
    return c;
  }

  const ProbeKey key = cache_key(req);
  const std::string cache_file = req.cache_dir.empty() ? "" : (fs::path(req.cache_dir) / "accel-probe.json").string();
  std::string machine_file;
  if (req.machine_cache_dir != "-") {
    const std::string dir = req.machine_cache_dir.empty() ? machine_probe_dir() : req.machine_cache_dir;
    machine_file = (fs::path(dir) / key.file_name()).string();
  }
  auto verdict = read_probe_verdict(cache_file, key);
  bool cached = verdict.has_value();
  if (!cached && (verdict = read_probe_verdict(machine_file, key))) {
    cached = true;
    write_probe_verdict(cache_file, key, *verdict);
  }
  if (!cached) {
    const auto t0 = std::chrono::steady_clock::now();
    const ProbeResult pr = probe_kvm(req);
    c.trial_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    verdict = ProbeVerdict{pr.ok, pr.detail, c.trial_s,
                           std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count()};
    write_probe_verdict(cache_file, key, *verdict);
    write_probe_verdict(machine_file, key, *verdict);
  }
  const ProbeResult pr{verdict->kvm_ok, verdict->detail};
  c.from_cache = cached;
  if (pr.ok) {
    c.accelerator = "kvm";
    c.reason = want + ": " + pr.detail;
    return c;
  }
  if (want == "kvm")
    throw AccelError("--accel kvm: " + req.kvm_device + " opens but cannot run a guest: " + pr.detail +
                     " (use --accel tcg, or fix nested virtualization)");
  c.accelerator = "tcg";
  c.reason = "auto: " + req.kvm_device + " opens but " + pr.detail + "; falling back to TCG";
  return c;
}

}  // namespace harness::vm
