// Domain XML and owner metadata of a harness guest (domain_xml.hpp).
#include "harness/pool/libvirt/domain_xml.hpp"

#include "harness/vm/init_script.hpp"
#include "harness/xml/text.hpp"

#include <regex>
#include <stdexcept>

namespace harness::pool::libvirt {

using harness::xml::xml_text;

namespace {

std::string xml_unescape(const std::string& s) {
  static const std::pair<const char*, char> ents[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&apos;", '\''}, {"&quot;", '"'}, {"&amp;", '&'}};
  std::string o;
  for (std::size_t i = 0; i < s.size();) {
    bool hit = false;
    if (s[i] == '&')
      for (const auto& [e, c] : ents) {
        const std::string es(e);
        if (s.compare(i, es.size(), es) == 0) {
          o += c;
          i += es.size();
          hit = true;
          break;
        }
      }
    if (!hit) o += s[i++];
  }
  return o;
}

std::string element(const std::string& tag, const std::string& value) {
  return "<" + tag + ">" + xml_text(value) + "</" + tag + ">";
}

std::optional<std::string> text_of(const std::string& xml, const std::string& tag) {
  const std::regex re("<" + tag + ">([^<]*)</" + tag + ">");
  std::smatch m;
  if (std::regex_search(xml, m, re)) return xml_unescape(m[1].str());
  if (xml.find("<" + tag + "/>") != std::string::npos) return std::string();
  return std::nullopt;
}

}  // namespace

std::string owner_xml(const OwnerRecord& o) {
  const std::string p = kOwnerPrefix;
  auto e = [&](const std::string& tag, const std::string& v) { return "<" + p + ":" + tag + ">" + xml_text(v) + "</" + p + ":" + tag + ">"; };
  return "<" + p + ":owner xmlns:" + p + "='" + kOwnerNamespace + "'>" + e("campaign", o.campaign) + e("db", o.db) +
         e("runner_host", o.runner_host) + e("runner_pid", std::to_string(o.runner_pid)) + e("guest", o.guest) +
         e("forward_port", std::to_string(o.forward_port)) + e("token_sha256", o.token_sha256) +
         e("image_sha256", o.image_sha256) + e("accelerator", o.accelerator) +
         e("accelerator_reason", o.accelerator_reason) + e("since_unix_ns", std::to_string(o.since_unix_ns)) + "</" + p +
         ":owner>";
}

std::optional<OwnerRecord> parse_owner_xml(const std::string& xml) {
  // virDomainGetMetadata hands the element back without our prefix; accept both forms.
  const std::string plain = std::regex_replace(xml, std::regex(std::string("<(/?)") + kOwnerPrefix + ":"), "<$1");
  const auto campaign = text_of(plain, "campaign");
  if (!campaign) return std::nullopt;
  OwnerRecord o;
  o.campaign = *campaign;
  o.db = text_of(plain, "db").value_or("");
  o.runner_host = text_of(plain, "runner_host").value_or("");
  o.guest = text_of(plain, "guest").value_or("");
  o.token_sha256 = text_of(plain, "token_sha256").value_or("");
  o.image_sha256 = text_of(plain, "image_sha256").value_or("");
  o.accelerator = text_of(plain, "accelerator").value_or("");
  o.accelerator_reason = text_of(plain, "accelerator_reason").value_or("");
  try {
    o.runner_pid = std::stoi(text_of(plain, "runner_pid").value_or("-1"));
    o.forward_port = std::stoi(text_of(plain, "forward_port").value_or("0"));
    o.since_unix_ns = std::stoll(text_of(plain, "since_unix_ns").value_or("0"));
  } catch (const std::exception&) {
    return std::nullopt;  // not a record we wrote
  }
  return o;
}

std::string domain_xml(const DomainSpec& s) {
  if (s.type != "qemu" && s.type != "kvm") throw std::invalid_argument("domain type must be qemu or kvm, got '" + s.type + "'");
  if (s.vcpus < 1) throw std::invalid_argument("vcpus must be >= 1");
  if (s.memory_mib < 256) throw std::invalid_argument("memory_mib must be >= 256");
  if (s.name.empty()) throw std::invalid_argument("domain name is empty");
  if (s.kernel.empty()) throw std::invalid_argument("kernel path is empty");
  if (s.console_log.empty()) throw std::invalid_argument("console_log path is empty");
  if (s.forward_port < 0 || s.forward_port > 65535) throw std::invalid_argument("forward_port out of range");
  const bool net = s.forward_port > 0;
  std::string x;
  x += "<domain type='" + s.type + "'" + (net ? " xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'" : "") + ">\n";
  x += "  " + element("name", s.name) + "\n";
  if (s.owner) x += "  <metadata>" + owner_xml(*s.owner) + "</metadata>\n";
  x += "  <memory unit='MiB'>" + std::to_string(s.memory_mib) + "</memory>\n";
  x += "  <currentMemory unit='MiB'>" + std::to_string(s.memory_mib) + "</currentMemory>\n";
  x += "  <vcpu placement='static'>" + std::to_string(s.vcpus) + "</vcpu>\n";
  x += "  <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n";
  x += "    " + element("kernel", s.kernel) + "\n";
  if (!s.initrd.empty()) x += "    " + element("initrd", s.initrd) + "\n";
  x += "    " + element("cmdline", s.cmdline) + "\n  </os>\n";
  x += "  <features><acpi/><apic/></features>\n";
  // The same CPU models as local guests: -cpu host under KVM, -cpu max under TCG.
  x += s.type == "kvm" ? "  <cpu mode='host-passthrough' check='none'/>\n" : "  <cpu mode='maximum' check='none'/>\n";
  x += "  <clock offset='utc'/>\n";
  x += "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n  <on_crash>destroy</on_crash>\n";
  x += "  <devices>\n";
  if (!s.disk.empty()) {
    // cache='none' (O_DIRECT on the hypervisor) as local guests: the guest's swapfile and
    // output writes do not sit in the host page cache.
    x += "    <disk type='file' device='disk'>\n      <driver name='qemu' type='raw' cache='none'/>\n";
    x += "      <source file='" + xml_text(s.disk) + "'/>\n      <target dev='vda' bus='virtio'/>\n    </disk>\n";
  }
  x += "    <controller type='usb' model='none'/>\n";
  x += "    <serial type='file'>\n      <source path='" + xml_text(s.console_log) +
       "' append='off'/>\n      <target port='0'/>\n    </serial>\n";
  x += "    <memballoon model='none'/>\n";
  x += "    <panic model='isa'/>\n";
  x += "  </devices>\n";
  if (net) {
    x += "  <qemu:commandline>\n";
    x += "    <qemu:arg value='-netdev'/>\n";
    x += "    <qemu:arg value='user,id=hk0,hostfwd=tcp:127.0.0.1:" + std::to_string(s.forward_port) + "-:" +
         std::to_string(harness::vm::guest::kAgentPort) + "'/>\n";
    x += "    <qemu:arg value='-device'/>\n";
    x += std::string("    <qemu:arg value='virtio-net-pci,netdev=hk0,bus=pcie.0,addr=") + kNicPciAddr + "'/>\n";
    x += "  </qemu:commandline>\n";
  }
  x += "</domain>\n";
  return x;
}

}  // namespace harness::pool::libvirt
