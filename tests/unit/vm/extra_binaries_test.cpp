// `harness vm image --extra-binary PATH`: which paths are refused and how (missing, not a
// regular file, not executable, a harness binary's name, two extras of one name), that the
// refusal comes before anything is built, and that an extra binary is part of the image's
// inputs hash (its name and content) while an image without extras keeps its former hash.
// No kernel is needed: the files are written by the test and the hash is computed directly.
#include "harness/vm/extra_binaries.hpp"
#include "harness/vm/image.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace {

struct Tmp {
  fs::path dir;
  Tmp() {
    std::string t = "/tmp/extra-bin-XXXXXX";
    dir = mkdtemp(t.data());
  }
  ~Tmp() { fs::remove_all(dir); }
  fs::path write(const std::string& rel, const std::string& text, fs::perms mode = fs::perms(0755)) const {
    const fs::path p = dir / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    fs::permissions(p, mode);
    return p;
  }
};

// The message of the std::runtime_error check_extra_binaries throws ("" when it accepts).
std::string refusal(const std::vector<std::string>& paths) {
  try {
    harness::vm::check_extra_binaries(paths);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ExtraBinaries, AcceptedWithTheirFileNameAndResolvedPathInOrder) {
  Tmp t;
  const auto a = t.write("a/tool-a", "#!/bin/sh\n");
  const auto b = t.write("b/tool-b", "#!/bin/sh\necho b\n", fs::perms(0700));
  fs::create_symlink(b, t.dir / "tool-link");  // the guest name is the link's, the content the target's
  const auto got = harness::vm::check_extra_binaries({a.string(), (t.dir / "tool-link").string()});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].name, "tool-a");
  EXPECT_EQ(got[0].path, fs::canonical(a).string());
  EXPECT_EQ(got[1].name, "tool-link");
  EXPECT_EQ(got[1].path, fs::canonical(b).string());
  EXPECT_TRUE(harness::vm::check_extra_binaries({}).empty());
}

TEST(ExtraBinaries, EachRefusalNamesTheFlagThePathAndTheReason) {
  Tmp t;
  const std::string missing = (t.dir / "nope/cyclictest").string();
  EXPECT_EQ(refusal({missing}), "--extra-binary " + missing + ": no such file");
  fs::create_directories(t.dir / "adir");
  EXPECT_EQ(refusal({(t.dir / "adir").string()}), "--extra-binary " + (t.dir / "adir").string() + ": not a regular file");
  const auto plain = t.write("plain", "data", fs::perms(0644));
  EXPECT_EQ(refusal({plain.string()}), "--extra-binary " + plain.string() + ": not executable (mode 0644)");
  for (const char* name : {"harness", "pressure-gen", "canary-compute", "canary-sqlite"}) {
    const auto clash = t.write(std::string("clash/") + name, "#!/bin/sh\n");
    EXPECT_THAT(refusal({clash.string()}),
                HasSubstr("--extra-binary " + clash.string() + ": its name " + name + " is a harness binary's"));
  }
  const auto first = t.write("one/tool", "#!/bin/sh\n");
  const auto second = t.write("two/tool", "#!/bin/sh\necho 2\n");
  EXPECT_EQ(refusal({first.string(), second.string()}),
            "--extra-binary " + second.string() + ": its name tool is also that of --extra-binary " + first.string());
  // a refused path among good ones is still refused
  EXPECT_EQ(refusal({first.string(), missing}), "--extra-binary " + missing + ": no such file");
}

TEST(ExtraBinaries, BuildImageRefusesABadExtraBeforeAnythingIsBuilt) {
  Tmp t;
  const auto bz = t.write("k/bzImage", "kernel", fs::perms(0644));
  fs::create_directories(t.dir / "m/6.9.0");
  harness::vm::ImageOptions opts;
  opts.cache_dir = (t.dir / "cache").string();
  opts.kernel = bz.string();
  opts.modules = (t.dir / "m/6.9.0").string();
  opts.out_dir = (t.dir / "images/with-extra").string();
  const std::string missing = (t.dir / "bin/cyclictest").string();
  opts.extra_binaries = {missing};
  try {
    harness::vm::build_image(opts);
    ADD_FAILURE() << "built with a missing --extra-binary";
  } catch (const std::runtime_error& e) {
    // not the kernel configuration check (there is no configuration here): the extra first
    EXPECT_EQ(std::string(e.what()), "--extra-binary " + missing + ": no such file");
  }
  EXPECT_FALSE(fs::exists(t.dir / "images"));
}

TEST(ExtraBinaries, AreInTheInputsHashByNameAndContent) {
  Tmp t;
  harness::vm::GuestKernel k;
  k.vmlinuz = t.write("k/vmlinuz", "kernel", fs::perms(0644)).string();
  k.release = "6.1.0-57-cloud-amd64";
  k.package = "linux-image-6.1.0-57-cloud-amd64";
  const std::string config = t.write("k/config", "CONFIG_PSI=y\n", fs::perms(0644)).string();
  harness::vm::ImageOptions opts;
  opts.busybox = t.write("busybox", "busybox", fs::perms(0755)).string();
  opts.bin_dir = (t.dir / "no-bin").string();
  const std::string without = harness::vm::image_inputs_sha256(opts, k, config);
  ASSERT_EQ(without.size(), 64u);

  const auto tool = t.write("x/tool", "#!/bin/sh\necho 1\n");
  opts.extra_binaries = {tool.string()};
  const std::string with = harness::vm::image_inputs_sha256(opts, k, config);
  EXPECT_NE(with, without);
  EXPECT_EQ(harness::vm::image_inputs_sha256(opts, k, config), with);  // the same inputs, the same hash

  t.write("x/tool", "#!/bin/sh\necho 2\n");  // new content, same name
  const std::string changed = harness::vm::image_inputs_sha256(opts, k, config);
  EXPECT_NE(changed, with);
  EXPECT_NE(changed, without);

  const auto renamed = t.write("y/other-tool", "#!/bin/sh\necho 2\n");  // that content, another name
  opts.extra_binaries = {renamed.string()};
  const std::string other_name = harness::vm::image_inputs_sha256(opts, k, config);
  EXPECT_NE(other_name, changed);

  const auto moved = t.write("z/other-tool", "#!/bin/sh\necho 2\n");  // only the host folder differs
  opts.extra_binaries = {moved.string()};
  EXPECT_EQ(harness::vm::image_inputs_sha256(opts, k, config), other_name);  // the guest gets the same file

  opts.extra_binaries.clear();  // without extras: the hash of before, so earlier images stay current
  EXPECT_EQ(harness::vm::image_inputs_sha256(opts, k, config), without);

  opts.extra_binaries = {(t.dir / "x/missing").string()};
  EXPECT_THROW(harness::vm::image_inputs_sha256(opts, k, config), std::runtime_error);
}
