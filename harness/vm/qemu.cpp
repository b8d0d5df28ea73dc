// qemu command line, accelerator detection, free port (see qemu.hpp).
#include "harness/vm/qemu.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <stdexcept>

namespace harness::vm {

std::string tcg_warning() {
  return "WARNING: guests run under TCG (software emulation). "
         "Timings (latency, reclaim durations, boot) are inflated; TCG results show the "
         "mechanism, not absolute performance.";
}

std::string guest_kernel_cmdline(const QemuConfig& c) {
  if (c.accelerator != "kvm" && c.accelerator != "tcg")
    throw std::invalid_argument("accelerator must be kvm or tcg (choose_accelerator decides), got '" + c.accelerator + "'");
  std::string extra;
  for (const auto& p : c.extra_cmdline) {
    bool ok = !p.empty() && p.size() <= 256;
    for (char ch : p)
      ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("_.,=:+-", ch) != nullptr);
    if (!ok) throw std::invalid_argument("kernel parameter '" + p + "' has characters outside [A-Za-z0-9_.,=:+-]");
    extra += " " + p;
  }
  return "console=ttyS0 panic=-1 loglevel=4 harness.mode=" + c.mode + " harness.name=" + c.name +
         " harness.accelerator=" + c.accelerator + " harness.swapfile_mib=" + std::to_string(c.swapfile_mib) +
         " harness.data_disk_cache=none" + extra + (c.guest_reboot ? " harness.allow_reboot=1" : "");
}

std::vector<std::string> qemu_argv(const QemuConfig& c) {
  if (c.vcpus < 1) throw std::invalid_argument("vcpus must be >= 1");
  if (c.memory_mib < 256) throw std::invalid_argument("memory_mib must be >= 256");
  if (c.vmlinuz.empty() || c.initramfs.empty())
    throw std::invalid_argument("vmlinuz/initramfs path is empty");
  if (c.disk.empty()) throw std::invalid_argument("disk path is empty");
  if (c.console_log.empty()) throw std::invalid_argument("console_log path is empty");
  const std::string cmdline = guest_kernel_cmdline(c);
  const std::string& accel = c.accelerator;
  std::vector<std::string> a = {"qemu-system-x86_64", "-name", c.name, "-machine", "q35",
                                "-accel", accel, "-cpu", accel == "kvm" ? "host" : "max",
                                "-smp", std::to_string(c.vcpus), "-m", std::to_string(c.memory_mib),
                                "-kernel", c.vmlinuz, "-initrd", c.initramfs,
                                "-append", cmdline,
                                // cache=none (O_DIRECT on the host): the guest's swapfile and
                                // out-dir writes do not sit in the host page cache, so host
                                // memory state does not shape the guest's I/O latency.
                                "-drive", "file=" + c.disk + ",format=raw,if=virtio,cache=none",
                                "-display", "none", "-monitor", "none",
                                "-serial", "file:" + c.console_log};
  if (!c.guest_reboot) a.push_back("-no-reboot");  // a guest reboot ends qemu
  if (c.host_port > 0) {
    a.insert(a.end(), {"-netdev",
                       "user,id=n0,hostfwd=tcp:127.0.0.1:" + std::to_string(c.host_port) + "-:8080",
                       "-device", "virtio-net-pci,netdev=n0"});
  } else if (c.user_network) {
    a.insert(a.end(), {"-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0"});
  } else {
    a.insert(a.end(), {"-nic", "none"});
  }
  if (c.daemonize) {
    a.push_back("-daemonize");
    if (!c.pidfile.empty()) a.insert(a.end(), {"-pidfile", c.pidfile});
  }
  return a;
}

int free_local_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("free_local_port: socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("free_local_port: bind failed");
  }
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

}  // namespace harness::vm
