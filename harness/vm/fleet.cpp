// Local guest fleet: up/down/list/reboot/console (see fleet.hpp).
#include "harness/vm/fleet.hpp"
#include "harness/agent/client/client.hpp"
#include "harness/json/limited_parse.hpp"

#include "harness/vm/accel.hpp"

#include "harness/vm/data_disk.hpp"
#include "harness/vm/image.hpp"
#include "harness/vm/init_script.hpp"
#include "harness/vm/paths.hpp"
#include "harness/vm/qemu.hpp"
#include "harness/vm/subprocess.hpp"

#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;

namespace harness::vm {
using nlohmann::json;
namespace {

fs::path vms_dir(const std::string& cache) { return fs::path(cache) / "vms"; }

std::string new_token() {
  unsigned char b[32];
  if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("token: RAND_bytes failed");
  static const char* d = "0123456789abcdef";
  std::string t;
  for (unsigned char c : b) {
    t += d[c >> 4];
    t += d[c & 15];
  }
  return t + "\n";
}

// qemu pid of a guest when that process is alive and is our qemu (guards pid reuse).
int live_pid(const fs::path& dir, const std::string& name) {
  std::string p;
  try {
    p = read_file((dir / "pid").string());
  } catch (const std::exception&) {
    return -1;
  }
  int pid = std::atoi(p.c_str());
  if (pid <= 0 || kill(pid, 0) != 0) return -1;
  std::string cmd;
  try {
    cmd = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  } catch (const std::exception&) {
    return -1;
  }
  for (char& c : cmd) c = c == '\0' ? ' ' : c;
  if (cmd.find("qemu-system") == std::string::npos || cmd.find(" -name " + name + " ") == std::string::npos)
    return -1;
  return pid;
}

void stop_pid(int pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 100 && kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (kill(pid, 0) == 0) kill(pid, SIGKILL);
  for (int i = 0; i < 50 && kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

json read_meta(const fs::path& dir) {
  try {
    return harness::json::parse_file((dir / "meta.json").string());
  } catch (const std::exception& e) {
    throw std::runtime_error("guest state " + (dir / "meta.json").string() + ": " + e.what());
  }
}

GuestInfo info_of(const fs::path& dir) {
  json m = read_meta(dir);
  GuestInfo g;
  g.name = m.value("name", dir.filename().string());
  g.url = "http://127.0.0.1:" + std::to_string(m.value("port", 0));
  g.token_file = (dir / "token").string();
  g.accelerator = m.value("accelerator", "");
  g.boot_to_ready_s = m.value("boot_to_ready_s", -1.0);
  g.state_dir = dir.string();
  g.pid = live_pid(dir, g.name);
  g.running = g.pid > 0;
  return g;
}

// Launches qemu for the guest described by meta.json (daemonized); fresh disk.
void launch(const Image& img, const fs::path& dir, const std::vector<std::string>& extra_cmdline = {}) {
  json m = read_meta(dir);
  std::string disk = (dir / "disk.img").string();
  copy_disk(img.disk_base, disk);
  disk_write(disk, (dir / "token").string(), disk_path_of(guest::kTokenFile), 0600);
  QemuConfig qc;
  qc.name = m["name"];
  qc.vmlinuz = img.vmlinuz;
  qc.initramfs = img.initramfs;
  qc.disk = disk;
  qc.console_log = (dir / "console.log").string();
  qc.mode = "agent";
  qc.vcpus = m["vcpus"];
  qc.memory_mib = m["memory_mib"];
  qc.swapfile_mib = m["swapfile_mib"];
  qc.host_port = m["port"];
  qc.accelerator = m["accelerator"];
  qc.guest_reboot = m.value("guest_reboot", false);
  qc.daemonize = true;
  qc.extra_cmdline = extra_cmdline;
  qc.pidfile = (dir / "pid").string();
  fs::remove(qc.pidfile);
  fs::remove(qc.console_log);
  run_checked(qemu_argv(qc));
}

/// One GET /v1/health of the agent on 127.0.0.1:`port` through the runner's agent client
/// (libcurl), not retried: true when it answers.
bool agent_answers(int port) {
  harness::agent::ClientOptions co;
  co.get_attempts = 1;
  co.connect_timeout = std::chrono::milliseconds(1000);
  co.request_timeout = std::chrono::milliseconds(3000);
  // Needs no token; not answering yet is a failed reply, and wait_ready asks again until its deadline.
  return harness::agent::AgentClient("http://127.0.0.1:" + std::to_string(port), "", "", co).health().ok();
}

// Polls GET /v1/health until 200 or timeout; returns seconds since t0, or -1.
double wait_ready(int port, std::chrono::steady_clock::time_point t0, int timeout_s, const fs::path& dir,
                  const std::string& name) {
  for (;;) {
    if (agent_answers(port))
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(timeout_s)) return -1;
    if (live_pid(dir, name) < 0 && fs::exists(dir / "pid")) return -1;  // qemu died
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

void save_ready(const fs::path& dir, double s) {
  json m = read_meta(dir);
  m["boot_to_ready_s"] = s;
  write_file((dir / "meta.json").string(), m.dump(2) + "\n");
}

}  // namespace

void write_hosts_file(const std::string& path, const std::vector<GuestInfo>& guests, bool fresh_per_case) {
  std::string y = "# Written by `harness vm up` (format: harness/vm/HOSTS.md).\n";
  y += std::string("# fresh_per_case: ") + (fresh_per_case ? "true" : "false") +
       " (local guests: `harness vm reboot NAME` gives a fresh guest before a case)\n";
  y += "hosts:\n";
  for (const auto& g : guests) {
    y += "  - name: " + (g.serves.empty() ? g.name : g.serves) + "\n";
    if (!g.serves.empty() && g.serves != g.name) y += "    local_guest: " + g.name + "\n";
    y += "    url: " + g.url + "\n";
    y += "    token_file: " + g.token_file + "\n";
    y += "    accelerator: " + g.accelerator + "\n";
    y += "    local: true\n";
  }
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  write_file(path, y, 0644);
}

std::vector<GuestInfo> fleet_up(const FleetOptions& o) {
  if (o.count < 1) throw std::runtime_error("--count must be >= 1");
  std::string cache = cache_root(o.cache_dir);
  Image img = load_image(o.cache_dir);
  AccelRequest req;
  req.requested = o.accelerator;
  req.vmlinuz = img.vmlinuz;
  req.cache_dir = cache;
  const AccelChoice choice = choose_accelerator(req);
  std::fprintf(stderr, "%s\n", choice.message().c_str());
  const std::string accel = choice.accelerator;
  std::vector<fs::path> dirs;
  for (int i = 0; i < o.count; ++i) {
    std::string name = "vm" + std::to_string(o.first_index + i);
    fs::path dir = vms_dir(cache) / name;
    if (fs::exists(dir / "meta.json") && live_pid(dir, name) > 0)
      throw std::runtime_error(name + " is already running (harness vm down " + name +
                               ", or harness vm reboot " + name + ")");
    fs::create_directories(dir);
    chmod(dir.c_str(), 0700);
    write_file((dir / "token").string(), new_token(), 0600);
    json m{{"name", name},
           {"port", free_local_port()},
           {"vcpus", o.vcpus},
           {"memory_mib", o.memory_mib},
           {"swapfile_mib", o.swapfile_mib},
           {"accelerator", accel},
           {"fresh_per_case", o.fresh_per_case},
           {"guest_reboot", o.guest_reboot},
           {"image_sha256", img.sha256}};
    write_file((dir / "meta.json").string(), m.dump(2) + "\n");
    dirs.push_back(dir);
  }
  std::vector<std::chrono::steady_clock::time_point> t0s;
  for (const auto& d : dirs) {
    t0s.push_back(std::chrono::steady_clock::now());
    launch(img, d);
  }
  std::vector<GuestInfo> out;
  std::string failures;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    json m = read_meta(dirs[i]);
    std::string name = m["name"];
    double s = wait_ready(m["port"], t0s[i], o.ready_timeout_s, dirs[i], name);
    if (s < 0) {
      failures += name + " not ready within " + std::to_string(o.ready_timeout_s) +
                  " s (see `harness vm console " + name + "`); ";
      continue;
    }
    save_ready(dirs[i], s);
    std::fprintf(stderr, "%s: ready in %.1f s (boot-to-ready, %s) at http://127.0.0.1:%d\n",
                 name.c_str(), s, accel.c_str(), m["port"].get<int>());
    out.push_back(info_of(dirs[i]));
  }
  // the hosts file lists every running guest, not only the ones just started
  std::vector<GuestInfo> all;
  for (const auto& g : fleet_list(o.cache_dir))
    if (g.running) all.push_back(g);
  std::string hosts = o.hosts_file.empty() ? (fs::path(cache) / "hosts.yaml").string() : o.hosts_file;
  write_hosts_file(hosts, all, o.fresh_per_case);
  std::fprintf(stderr, "hosts file: %s\n", hosts.c_str());
  if (!failures.empty()) throw std::runtime_error(failures);
  return out;
}

std::vector<std::string> fleet_down(const std::string& cache_dir, const std::vector<std::string>& names) {
  std::string cache = cache_root(cache_dir);
  std::vector<std::string> stopped;
  std::vector<GuestInfo> targets;
  if (names.empty()) {
    targets = fleet_list(cache_dir);
  } else {
    for (const auto& n : names) {
      fs::path d = vms_dir(cache) / n;
      if (!fs::exists(d / "meta.json")) throw std::runtime_error("unknown guest " + n + " (see harness vm list)");
      targets.push_back(info_of(d));
    }
  }
  for (const auto& g : targets) {
    if (g.running) {
      stop_pid(g.pid);
      stopped.push_back(g.name);
    }
    fs::remove(fs::path(g.state_dir) / "disk.img");
    fs::remove(fs::path(g.state_dir) / "pid");
  }
  return stopped;
}

std::vector<GuestInfo> fleet_list(const std::string& cache_dir) {
  std::string cache = cache_root(cache_dir);
  std::vector<GuestInfo> r;
  if (!fs::exists(vms_dir(cache))) return r;
  for (const auto& e : fs::directory_iterator(vms_dir(cache)))
    if (fs::exists(e.path() / "meta.json")) r.push_back(info_of(e.path()));
  std::sort(r.begin(), r.end(), [](const GuestInfo& a, const GuestInfo& b) { return a.name < b.name; });
  return r;
}

GuestInfo fleet_reboot(const std::string& cache_dir, const std::string& name, int ready_timeout_s,
                       const BootOptions& boot) {
  std::string cache = cache_root(cache_dir);
  fs::path dir = vms_dir(cache) / name;
  if (!fs::exists(dir / "meta.json")) throw std::runtime_error("unknown guest " + name + " (see harness vm list)");
  Image img = boot.image_dir.empty() ? load_image(cache_dir) : load_image_dir(boot.image_dir);
  {
    json m = read_meta(dir);
    m["boot"] = {{"image_dir", img.dir}, {"kernel_release", img.kernel_release}, {"cmdline", boot.cmdline}};
    write_file((dir / "meta.json").string(), m.dump(2) + "\n");
  }
  stop_pid(live_pid(dir, name));
  auto t0 = std::chrono::steady_clock::now();
  launch(img, dir, boot.cmdline);
  json m = read_meta(dir);
  double s = wait_ready(m["port"], t0, ready_timeout_s, dir, name);
  if (s < 0)
    throw std::runtime_error(name + " not ready within " + std::to_string(ready_timeout_s) +
                             " s after reboot (see `harness vm console " + name + "`)");
  save_ready(dir, s);
  return info_of(dir);
}

std::string console_log_path(const std::string& cache_dir, const std::string& name) {
  fs::path dir = vms_dir(cache_root(cache_dir)) / name;
  if (!fs::exists(dir / "meta.json")) throw std::runtime_error("unknown guest " + name + " (see harness vm list)");
  return (dir / "console.log").string();
}

}  // namespace harness::vm
