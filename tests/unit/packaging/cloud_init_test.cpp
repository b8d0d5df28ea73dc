// `harness fleet cloud-init` user-data (harness/packaging/cloud_init.hpp): valid YAML
// that writes the token 0600, embeds or downloads the package, installs it and enables
// the agent; refuses bad inputs naming the option.
#include "harness/packaging/cloud_init.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

namespace fs = std::filesystem;
using harness::packaging::CloudInitOptions;
using harness::packaging::cloud_init_user_data;

namespace {

/// A token the agent's rule accepts (harness/agent/http/token.hpp judge_token).
const char* const kToken = "cloud-init-test-token-0123456789-abcdefXYZ";

class CloudInit : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("cloud-init-test-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "token") << kToken << "\n";
    chmod((dir / "token").c_str(), 0600);
    make_deb("reclaim-harness", dir / "x.deb");
    make_deb("some-other-package", dir / "other.deb");
    std::ofstream(dir / "not.deb", std::ios::binary) << std::string("!<arch>\n\x01\x02\xff", 11);
  }
  // A minimal real package (dpkg-deb --build) named `name`.
  void make_deb(const std::string& name, const fs::path& out) {
    const fs::path root = dir / ("root-" + name);
    fs::create_directories(root / "DEBIAN");
    std::ofstream(root / "DEBIAN/control") << "Package: " << name
                                           << "\nVersion: 0.1.0\nArchitecture: amd64\nMaintainer: t <t@example.org>\n"
                                              "Description: test package\n";
    ASSERT_EQ(std::system(("dpkg-deb --root-owner-group --build " + root.string() + " " + out.string() +
                           " >/dev/null").c_str()),
              0);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string error_of(const CloudInitOptions& o) {
    try {
      cloud_init_user_data(o);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }

  static const YAML::Node* file(const YAML::Node& doc, const std::string& path, YAML::Node& out) {
    const YAML::Node files = doc["write_files"];
    for (std::size_t i = 0; i < files.size(); ++i)
      if (files[i]["path"].as<std::string>() == path) {
        out = files[i];
        return &out;
      }
    return nullptr;
  }
};

std::string decode_b64(const std::string& s) {
  std::string out(s.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

TEST_F(CloudInit, EmbeddedPackageTokenAndAgentEnabled) {
  CloudInitOptions o;
  o.token_file = (dir / "token").string();
  o.deb_path = (dir / "x.deb").string();
  const std::string y = cloud_init_user_data(o);
  ASSERT_EQ(y.rfind("#cloud-config\n", 0), 0u);
  const YAML::Node doc = YAML::Load(y);
  YAML::Node f;
  ASSERT_TRUE(file(doc, "/etc/reclaim-harness/agent.token", f));
  EXPECT_EQ(f["permissions"].as<std::string>(), "0600");
  EXPECT_EQ(f["content"].as<std::string>(), kToken);
  ASSERT_TRUE(file(doc, "/var/cache/reclaim-harness/reclaim-harness.deb", f));
  EXPECT_EQ(f["encoding"].as<std::string>(), "b64");
  // EVP_DecodeBlock pads to a multiple of 3: the package bytes are a prefix.
  std::ifstream deb(dir / "x.deb", std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(deb), {});
  EXPECT_EQ(decode_b64(f["content"].as<std::string>()).substr(0, bytes.size()), bytes);
  // The file says it is a secret.
  EXPECT_NE(y.find("# SECRET: it carries the agent's bearer token in clear text"), std::string::npos) << y;
  std::string cmds;
  for (const auto& c : doc["runcmd"]) {
    for (const auto& w : c) cmds += w.as<std::string>() + " ";
    cmds += "\n";
  }
  EXPECT_NE(cmds.find("apt-get install -y /var/cache/reclaim-harness/reclaim-harness.deb"), std::string::npos) << cmds;
  EXPECT_NE(cmds.find("systemctl enable --now reclaim-harness-agent.service"), std::string::npos) << cmds;
  EXPECT_EQ(cmds.find("curl"), std::string::npos);
}

TEST_F(CloudInit, DownloadedPackageIsCheckedBySha256AndTlsFilesAreWritten) {
  const std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                          "-subj /CN=t -keyout " + (dir / "k.pem").string() + " -out " + (dir / "c.pem").string() +
                          " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  CloudInitOptions o;
  o.token_file = (dir / "token").string();
  o.deb_url = "https://example.org/reclaim-harness_0.1.0_amd64.deb";
  o.deb_sha256 = std::string(64, 'a');
  o.tls_cert_file = (dir / "c.pem").string();
  o.tls_key_file = (dir / "k.pem").string();
  o.swapfile_mib = "512";
  const YAML::Node doc = YAML::Load(cloud_init_user_data(o));
  YAML::Node f;
  ASSERT_TRUE(file(doc, "/etc/reclaim-harness/agent.key", f));
  EXPECT_EQ(f["permissions"].as<std::string>(), "0600");
  std::ifstream k(dir / "k.pem");
  EXPECT_EQ(f["content"].as<std::string>(), std::string(std::istreambuf_iterator<char>(k), {}));
  ASSERT_TRUE(file(doc, "/etc/reclaim-harness/agent.pem", f));
  EXPECT_FALSE(file(doc, "/var/cache/reclaim-harness/reclaim-harness.deb", f));
  std::string cmds;
  for (const auto& c : doc["runcmd"]) {
    for (const auto& w : c) cmds += w.as<std::string>() + " ";
    cmds += "\n";
  }
  const auto dl = cmds.find("curl");
  const auto check = cmds.find("sha256sum -c");
  const auto install = cmds.find("apt-get install");
  ASSERT_NE(dl, std::string::npos) << cmds;
  ASSERT_NE(check, std::string::npos) << cmds;
  EXPECT_LT(dl, check);
  EXPECT_LT(check, install);  // checked before installed
  EXPECT_NE(cmds.find(std::string(64, 'a')), std::string::npos);
  EXPECT_NE(cmds.find("HARNESS_SWAPFILE_MIB=512"), std::string::npos);
  EXPECT_LT(install, cmds.find("HARNESS_SWAPFILE_MIB=512"));  // edits the installed conffile
}

TEST_F(CloudInit, BadInputsNameTheOption) {
  CloudInitOptions o;
  o.token_file = (dir / "token").string();
  EXPECT_NE(error_of(o).find("exactly one of --deb"), std::string::npos);
  o.deb_path = (dir / "x.deb").string();
  o.deb_url = "https://x/y.deb";
  EXPECT_NE(error_of(o).find("exactly one of --deb"), std::string::npos);
  o.deb_path.clear();
  o.deb_sha256 = "abc";
  EXPECT_NE(error_of(o).find("--deb-sha256"), std::string::npos);
  o.deb_sha256 = std::string(64, 'b');
  o.tls_cert_file = "/nonexistent.pem";
  EXPECT_NE(error_of(o).find("--tls-cert and --tls-key go together"), std::string::npos);
  o.tls_cert_file.clear();
  o.swapfile_mib = "256; rm -rf /";
  EXPECT_NE(error_of(o).find("--swapfile-mib"), std::string::npos);
  o.swapfile_mib.clear();
  chmod((dir / "token").c_str(), 0644);
  EXPECT_NE(error_of(o).find("mode must be 0600"), std::string::npos);
  o.token_file = (dir / "missing").string();
  EXPECT_NE(error_of(o).find("--token-file"), std::string::npos);
}

// A token the agent would refuse to start with is refused here, on the workstation, naming
// the file and the rule it breaks (else every VM of the fleet would come up without an agent).
TEST_F(CloudInit, TokenTheAgentWouldRefuseIsRefused) {
  CloudInitOptions o;
  o.token_file = (dir / "weak").string();
  o.deb_path = (dir / "x.deb").string();
  for (const auto& [weak, why] : {std::pair<std::string, std::string>{"abababababababababababababababab", "only 2 different"},
                                  {"0123456789abcdef0123456789abcdef", "repeated"}, {"short-token", "shorter than 32"}}) {
    { std::ofstream(dir / "weak", std::ios::trunc) << weak << "\n"; }
    chmod((dir / "weak").c_str(), 0600);
    const std::string e = error_of(o);
    EXPECT_NE(e.find("--token-file " + o.token_file + ": "), std::string::npos) << weak << ": " << e;
    EXPECT_NE(e.find(why), std::string::npos) << weak << ": " << e;
  }
}

TEST_F(CloudInit, OnlyThisProjectsPackageIsEmbedded) {
  CloudInitOptions o;
  o.token_file = (dir / "token").string();
  o.deb_path = (dir / "not.deb").string();
  EXPECT_NE(error_of(o).find("--deb " + (dir / "not.deb").string() + ": not a Debian package"), std::string::npos)
      << error_of(o);
  o.deb_path = (dir / "other.deb").string();
  EXPECT_NE(error_of(o).find("Debian package 'some-other-package', not reclaim-harness"), std::string::npos)
      << error_of(o);
  o.deb_path = (dir / "missing.deb").string();
  EXPECT_NE(error_of(o).find("cannot read"), std::string::npos) << error_of(o);
  EXPECT_EQ(harness::packaging::deb_package_name((dir / "x.deb").string()), "reclaim-harness");
}

}  // namespace
