// A host's identity (harness/pool/host_identity.hpp): credentials and options of how to get
// there do not make another host; what chooses the daemon does.
#include "harness/pool/host_identity.hpp"

#include <gtest/gtest.h>

using harness::pool::host_identity;

TEST(HostIdentity, CredentialsAndOptionsAreNotPartOfTheHost) {
  const std::string id = "qemu+ssh://lab@hv2.example.org/system";
  EXPECT_EQ(host_identity("qemu+ssh://lab@hv2.example.org/system?keyfile=/home/me/.ssh/lab_ed25519"), id);
  EXPECT_EQ(host_identity("qemu+ssh://lab@hv2.example.org/system?keyfile=/moved/key&no_verify=1"), id);
  EXPECT_EQ(host_identity("qemu+ssh://lab@hv2.example.org/system?known_hosts=/k&command=/usr/bin/ssh&sshauth=agent"), id);
  EXPECT_EQ(host_identity("qemu+ssh://lab:secret@hv2.example.org/system"), id);  // a password is a credential
  EXPECT_EQ(host_identity("  QEMU+SSH://lab@HV2.example.org/system#x  "), id);   // scheme and host case, blanks
}

TEST(HostIdentity, UserPortPathAndTheDaemonsSocketMakeAnotherHost) {
  EXPECT_NE(host_identity("qemu+ssh://lab@hv2/system"), host_identity("qemu+ssh://root@hv2/system"));
  EXPECT_EQ(host_identity("qemu+ssh://lab@hv2:2222/system?keyfile=/k"), "qemu+ssh://lab@hv2:2222/system");
  EXPECT_NE(host_identity("qemu+ssh://hv2/system"), host_identity("qemu+ssh://hv2/session"));
  // the socket and the remote name choose the daemon: kept, sorted, the rest dropped
  EXPECT_EQ(host_identity("qemu+ssh://hv2/system?socket=/run/b.sock&keyfile=/k&name=qemu:///system"),
            "qemu+ssh://hv2/system?name=qemu:///system&socket=/run/b.sock");
  EXPECT_NE(host_identity("qemu:///system?socket=/run/a.sock"), host_identity("qemu:///system"));
  EXPECT_EQ(host_identity("qemu:///system"), "qemu:///system");
}

TEST(HostIdentity, TextWithoutAUriIsItsOwnIdentity) {
  EXPECT_EQ(host_identity("local:ws"), "local:ws");
  EXPECT_EQ(host_identity(" hv2.lab "), "hv2.lab");
  EXPECT_EQ(host_identity(""), "");
}
