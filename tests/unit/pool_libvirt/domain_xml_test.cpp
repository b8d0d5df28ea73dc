// Domain XML of a harness guest: what it states, and what libvirt (its test driver) reads
// back from it; the owner record round trip.
#include "harness/pool/libvirt/domain_xml.hpp"
#include "harness/pool/libvirt/virt.hpp"

#include <gtest/gtest.h>

#include <regex>

using namespace harness::pool::libvirt;

namespace {

DomainSpec guest_spec() {
  DomainSpec s;
  s.name = "t-dx-vm0";
  s.type = "qemu";
  s.kernel = "/var/lib/libvirt/reclaim-harness/rh-0123456789abcdef-vmlinuz";
  s.initrd = "/var/lib/libvirt/reclaim-harness/rh-0123456789abcdef-initramfs.cpio.gz";
  s.cmdline = "console=ttyS0 panic=-1 harness.name=vm0 a=<b>&c";
  s.disk = "/var/lib/libvirt/reclaim-harness/t-dx-vm0-disk.img";
  s.console_log = "/var/lib/libvirt/reclaim-harness/t-dx-vm0-console.log";
  s.forward_port = 41234;
  OwnerRecord o;
  o.campaign = "smoke";
  o.db = "/data/smoke.db";
  o.runner_host = "lab1";
  o.runner_pid = 4242;
  o.guest = "vm0";
  o.forward_port = 41234;
  o.token_sha256 = std::string(64, 'a');
  o.image_sha256 = std::string(64, 'b');
  o.accelerator = "tcg";
  o.accelerator_reason = "auto: no <kvm> & \"reasons\"";
  o.since_unix_ns = 1700000000123456789;
  s.owner = o;
  return s;
}

int count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(DomainXml, StatesTheStudyShapeAndDevices) {
  const std::string x = domain_xml(guest_spec());
  EXPECT_EQ(count(x, "<vcpu placement='static'>1</vcpu>"), 1);
  EXPECT_EQ(count(x, "<memory unit='MiB'>1024</memory>"), 1);
  EXPECT_EQ(count(x, "<currentMemory unit='MiB'>1024</currentMemory>"), 1);
  EXPECT_EQ(count(x, "<memballoon model='none'/>"), 1);
  EXPECT_EQ(count(x, "<memballoon"), 1);
  EXPECT_EQ(count(x, "<panic model='isa'/>"), 1);
  EXPECT_EQ(count(x, "<on_crash>destroy</on_crash>"), 1);
  EXPECT_EQ(count(x, "<on_reboot>destroy</on_reboot>"), 1);
  EXPECT_EQ(count(x, "<type arch='x86_64' machine='q35'>hvm</type>"), 1);
  EXPECT_EQ(count(x, "<driver name='qemu' type='raw' cache='none'/>"), 1);
  EXPECT_EQ(count(x, "<cpu mode='maximum' check='none'/>"), 1);
  EXPECT_EQ(count(x, "<source path='/var/lib/libvirt/reclaim-harness/t-dx-vm0-console.log' append='off'/>"), 1);
  EXPECT_EQ(count(x, "<cmdline>console=ttyS0 panic=-1 harness.name=vm0 a=&lt;b&gt;&amp;c</cmdline>"), 1);
  // the agent forward: hypervisor loopback only, NIC at the explicit PCI slot
  EXPECT_EQ(count(x, "<qemu:arg value='user,id=hk0,hostfwd=tcp:127.0.0.1:41234-:8080'/>"), 1);
  EXPECT_EQ(count(x, "<qemu:arg value='virtio-net-pci,netdev=hk0,bus=pcie.0,addr=0x9'/>"), 1);
  EXPECT_EQ(count(x, "xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'"), 1);
  EXPECT_EQ(count(x, "0.0.0.0"), 0);
}

TEST(DomainXml, KvmTypeUsesTheHostCpuAndNoNicWithoutForward) {
  DomainSpec s = guest_spec();
  s.type = "kvm";
  s.forward_port = 0;
  s.initrd.clear();
  s.disk.clear();
  const std::string x = domain_xml(s);
  EXPECT_EQ(count(x, "<domain type='kvm'>"), 1);
  EXPECT_EQ(count(x, "<cpu mode='host-passthrough' check='none'/>"), 1);
  EXPECT_EQ(count(x, "qemu:commandline"), 0);
  EXPECT_EQ(count(x, "<initrd>"), 0);
  EXPECT_EQ(count(x, "<disk "), 0);
}

TEST(DomainXml, RefusesBadSpecs) {
  auto bad = [](auto edit) {
    DomainSpec s = guest_spec();
    edit(s);
    return s;
  };
  EXPECT_THROW(domain_xml(bad([](DomainSpec& s) { s.type = "xen"; })), std::invalid_argument);
  EXPECT_THROW(domain_xml(bad([](DomainSpec& s) { s.vcpus = 0; })), std::invalid_argument);
  EXPECT_THROW(domain_xml(bad([](DomainSpec& s) { s.memory_mib = 128; })), std::invalid_argument);
  EXPECT_THROW(domain_xml(bad([](DomainSpec& s) { s.kernel.clear(); })), std::invalid_argument);
  EXPECT_THROW(domain_xml(bad([](DomainSpec& s) { s.console_log.clear(); })), std::invalid_argument);
  EXPECT_THROW(domain_xml(bad([](DomainSpec& s) { s.forward_port = 70000; })), std::invalid_argument);
}

TEST(DomainXml, LibvirtReadsItBack) {
  Conn c = open_connection("test:///default");
  const std::string x = domain_xml(guest_spec());
  Domain d(virDomainDefineXML(c.get(), x.c_str()));
  ASSERT_TRUE(d) << last_error();
  const std::string back = take_string(virDomainGetXMLDesc(d.get(), 0));
  virDomainUndefine(d.get());
  EXPECT_NE(back.find("<memory unit='KiB'>1048576</memory>"), std::string::npos) << back;
  EXPECT_NE(back.find("<vcpu placement='static'>1</vcpu>"), std::string::npos) << back;
  EXPECT_NE(back.find("<memballoon model='none'/>"), std::string::npos) << back;
  EXPECT_NE(back.find("<panic model='isa'/>"), std::string::npos) << back;
  EXPECT_NE(back.find("<on_crash>destroy</on_crash>"), std::string::npos) << back;
  const std::regex owner("<rh:owner xmlns:rh=\"http://reclaim-harness/schemas/libvirt-owner/1\">");
  EXPECT_TRUE(std::regex_search(back, owner)) << back;
}

TEST(DomainXml, OwnerRecordRoundTrip) {
  const OwnerRecord o = *guest_spec().owner;
  for (const std::string& form : {owner_xml(o),
                                  // the form virDomainGetMetadata returns: no prefix
                                  std::regex_replace(owner_xml(o), std::regex("rh:"), "")}) {
    const auto p = parse_owner_xml(form);
    ASSERT_TRUE(p) << form;
    EXPECT_EQ(p->campaign, o.campaign);
    EXPECT_EQ(p->db, o.db);
    EXPECT_EQ(p->runner_host, o.runner_host);
    EXPECT_EQ(p->runner_pid, o.runner_pid);
    EXPECT_EQ(p->guest, o.guest);
    EXPECT_EQ(p->forward_port, o.forward_port);
    EXPECT_EQ(p->token_sha256, o.token_sha256);
    EXPECT_EQ(p->image_sha256, o.image_sha256);
    EXPECT_EQ(p->accelerator, o.accelerator);
    EXPECT_EQ(p->accelerator_reason, o.accelerator_reason);
    EXPECT_EQ(p->since_unix_ns, o.since_unix_ns);
  }
  EXPECT_FALSE(parse_owner_xml("<owner><guest>vm0</guest></owner>"));
  EXPECT_FALSE(parse_owner_xml(""));
}
