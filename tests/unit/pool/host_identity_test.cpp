// A host's identity (harness/pool/host_identity.hpp): credentials and options of how to get
// there do not make another host; what chooses the daemon does. And the one URI split (uri_parts.hpp).
#include "harness/pool/host_identity.hpp"
#include "harness/pool/uri_parts.hpp"

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

// The one URI split both readers use: parts as written, the fragment dropped, userinfo before
// the authority's last '@'; text without "://" (or nothing before it) is no URI.
TEST(SplitUri, PartsAsWritten) {
  const auto u = harness::pool::split_uri("qemu+ssh://Me:pw@[::1]:2200/system?keyfile=/k%20x&name=a#frag");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->scheme, "qemu+ssh");
  EXPECT_EQ(u->userinfo, "Me:pw");
  EXPECT_EQ(u->authority, "[::1]:2200");
  EXPECT_EQ(u->path, "/system");
  EXPECT_EQ(u->query, "keyfile=/k%20x&name=a");
  const auto bare = harness::pool::split_uri("qemu:///system");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->authority, "");
  EXPECT_EQ(bare->path, "/system");
  EXPECT_FALSE(harness::pool::split_uri("hv2.lab").has_value());
  EXPECT_FALSE(harness::pool::split_uri("://x").has_value());
}
