// `harness vm image --kernel`: a candidate kernel gets its own image directory, and its build
// configuration is checked for what the harness needs (PSI, memcg, zram, compressors, virtio)
// before anything is built. Configurations are written by the test: the Debian cloud
// kernel's values for the required options (config-6.1.0-57-cloud-amd64), then one changed.
#include "harness/vm/image.hpp"
#include "harness/vm/kernel_requirements.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// The required options as the Debian 6.1 cloud kernel sets them (modules where it can).
std::map<std::string, std::string> debian_cloud() {
  return {{"CONFIG_CGROUPS", "y"},      {"CONFIG_MEMCG", "y"},       {"CONFIG_PSI", "y"},
          {"CONFIG_CGROUP_SCHED", "y"}, {"CONFIG_BLK_CGROUP", "y"},  {"CONFIG_SWAP", "y"},
          {"CONFIG_ZRAM", "m"},         {"CONFIG_ZSMALLOC", "m"},    {"CONFIG_CRYPTO_LZO", "m"},
          {"CONFIG_CRYPTO_LZ4", "m"},   {"CONFIG_CRYPTO_LZ4HC", "m"}, {"CONFIG_CRYPTO_ZSTD", "m"},
          {"CONFIG_PCI", "y"},          {"CONFIG_VIRTIO_PCI", "m"},  {"CONFIG_VIRTIO_BLK", "m"},
          {"CONFIG_VIRTIO_NET", "m"},   {"CONFIG_NET", "y"},         {"CONFIG_INET", "y"},
          {"CONFIG_EXT4_FS", "y"},      {"CONFIG_BLK_DEV_INITRD", "y"}, {"CONFIG_RD_GZIP", "y"},
          {"CONFIG_DEVTMPFS", "y"},     {"CONFIG_SERIAL_8250_CONSOLE", "y"}};
}

std::string config_text(const std::map<std::string, std::string>& opts) {
  std::string t = "#\n# Automatically generated file; DO NOT EDIT.\n#\n";
  for (const auto& [k, v] : opts) t += v == "n" ? "# " + k + " is not set\n" : k + "=" + v + "\n";
  t += "# CONFIG_PSI_DEFAULT_DISABLED is not set\nCONFIG_ZRAM_DEF_COMP=\"lzo-rle\"\n";
  return t;
}

harness::vm::KernelConfigCheck check(const std::map<std::string, std::string>& opts,
                             const std::string& release = "6.1.0-57-cloud-amd64") {
  return harness::vm::check_kernel_config(harness::kernel::parse_kernel_config(config_text(opts), "test.config"), release);
}

struct Tmp {
  fs::path dir;
  Tmp() {
    std::string t = "/tmp/kreq-XXXXXX";
    dir = mkdtemp(t.data());
  }
  ~Tmp() { fs::remove_all(dir); }
  fs::path write(const std::string& rel, const std::string& text) const {
    const fs::path p = dir / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
};

}  // namespace

TEST(KernelRequirements, DebianCloudKernelPassesWithModules) {
  const auto c = check(debian_cloud());
  EXPECT_TRUE(c.ok()) << ::testing::PrintToString(c.problems);
  EXPECT_TRUE(c.builtin_modules.empty());  // all of them are modules there
}

TEST(KernelRequirements, EachMissingOptionIsNamedWithWhatWasFound) {
  auto o = debian_cloud();
  o.erase("CONFIG_PSI");
  o["CONFIG_ZRAM"] = "n";
  o["CONFIG_MEMCG"] = "m";  // a module is not enough for the memory controller
  o["CONFIG_CRYPTO_ZSTD"] = "n";
  o["CONFIG_VIRTIO_BLK"] = "n";
  const auto c = check(o);
  ASSERT_EQ(c.problems.size(), 5u) << ::testing::PrintToString(c.problems);
  const std::string all = ::testing::PrintToString(c.problems);
  EXPECT_THAT(all, HasSubstr("CONFIG_PSI=absent: needs y (pressure stall information"));
  EXPECT_THAT(all, HasSubstr("CONFIG_ZRAM=n: needs y or m (the zram backend)"));
  EXPECT_THAT(all, HasSubstr("CONFIG_MEMCG=m: needs y"));
  EXPECT_THAT(all, HasSubstr("CONFIG_CRYPTO_ZSTD=n: needs y or m"));
  EXPECT_THAT(all, HasSubstr("CONFIG_VIRTIO_BLK=n: needs y or m"));
}

TEST(KernelRequirements, BuiltInModulesAreReportedSoTheImageSkipsThem) {
  auto o = debian_cloud();
  o["CONFIG_CRYPTO_LZO"] = "y";
  o["CONFIG_ZRAM"] = "y";
  o["CONFIG_VIRTIO_NET"] = "y";
  const auto c = check(o);
  EXPECT_TRUE(c.ok());
  EXPECT_THAT(c.builtin_modules, ::testing::UnorderedElementsAre("lzo", "lzo_rle", "zram", "virtio_net"));
}

TEST(KernelRequirements, PsiDisabledByDefaultAndOldKernelsAreRefused) {
  auto text = config_text(debian_cloud());
  text.replace(text.find("# CONFIG_PSI_DEFAULT_DISABLED is not set"),
               std::string("# CONFIG_PSI_DEFAULT_DISABLED is not set").size(), "CONFIG_PSI_DEFAULT_DISABLED=y");
  const auto c = harness::vm::check_kernel_config(harness::kernel::parse_kernel_config(text, "t"), "6.1.0-57-cloud-amd64");
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_THAT(c.problems[0], HasSubstr("CONFIG_PSI_DEFAULT_DISABLED=y: needs n"));
  const auto old = check(debian_cloud(), "5.15.0-91-generic");
  ASSERT_EQ(old.problems.size(), 1u);
  EXPECT_THAT(old.problems[0], HasSubstr("needs 5.19 or later (cgroup v2 memory.reclaim)"));
  EXPECT_TRUE(check(debian_cloud(), "5.19.0").ok());
  EXPECT_FALSE(check(debian_cloud(), "custom").ok());
}

TEST(KernelRequirements, ConfigIsFoundNextToTheKernelInItsTreeOrItsModules) {
  Tmp t;
  // a kernel build tree: <tree>/arch/x86/boot/bzImage, <tree>/.config
  const auto bz = t.write("linux/arch/x86/boot/bzImage", "kernel");
  const auto tree_cfg = t.write("linux/.config", config_text(debian_cloud()));
  const auto mods = t.dir / "mods/lib/modules/6.9.0";
  fs::create_directories(mods);
  EXPECT_EQ(harness::vm::find_kernel_config(bz.string(), mods.string(), "6.9.0", ""), tree_cfg.lexically_normal().string());
  // a copy next to the bzImage wins
  const auto next = t.write("linux/arch/x86/boot/.config", config_text(debian_cloud()));
  EXPECT_EQ(harness::vm::find_kernel_config(bz.string(), mods.string(), "6.9.0", ""), next.string());
  // /boot layout: vmlinuz-R next to config-R
  const auto vmlinuz = t.write("root/boot/vmlinuz-6.9.0", "kernel");
  const auto boot_cfg = t.write("root/boot/config-6.9.0", config_text(debian_cloud()));
  EXPECT_EQ(harness::vm::find_kernel_config(vmlinuz.string(), mods.string(), "6.9.0", ""), boot_cfg.string());
  // the modules tree's build link
  const auto lone = t.write("lone/bzImage", "kernel");
  const auto build_cfg = t.write("mods/lib/modules/6.9.0/build/.config", config_text(debian_cloud()));
  EXPECT_EQ(harness::vm::find_kernel_config(lone.string(), mods.string(), "6.9.0", ""), build_cfg.string());
  // explicit wins; a missing explicit file is an error naming the flag
  EXPECT_EQ(harness::vm::find_kernel_config(lone.string(), mods.string(), "6.9.0", boot_cfg.string()), boot_cfg.string());
  EXPECT_THROW(
      {
        try {
          harness::vm::find_kernel_config(lone.string(), mods.string(), "6.9.0", (t.dir / "nope").string());
        } catch (const std::runtime_error& e) {
          EXPECT_THAT(e.what(), HasSubstr("--kernel-config: no such file"));
          throw;
        }
      },
      std::runtime_error);
}

TEST(KernelRequirements, NoConfigAndAnIncompleteConfigAreClearErrors) {
  Tmp t;
  const auto bz = t.write("k/bzImage", "kernel");
  const auto mods = t.dir / "m/6.9.0-nocfg";
  fs::create_directories(mods);
  try {
    harness::vm::require_guest_kernel(bz.string(), mods.string(), "6.9.0-nocfg", "", "--kernel " + bz.string());
    ADD_FAILURE() << "no configuration was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no kernel configuration found for release 6.9.0-nocfg"));
    EXPECT_THAT(e.what(), HasSubstr((t.dir / "k/.config").string()));
    EXPECT_THAT(e.what(), HasSubstr("/boot/config-6.9.0-nocfg"));
    EXPECT_THAT(e.what(), HasSubstr("--kernel-config FILE"));
  }
  auto o = debian_cloud();
  o.erase("CONFIG_PSI");
  const auto cfg = t.write("k/.config", config_text(o));
  try {
    harness::vm::require_guest_kernel(bz.string(), mods.string(), "6.9.0-nocfg", "", "--kernel " + bz.string());
    ADD_FAILURE() << "a kernel without PSI was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--kernel " + bz.string() + ": the kernel (release 6.9.0-nocfg, configuration " +
                                    cfg.string() + ") lacks what the harness needs"));
    EXPECT_THAT(e.what(), HasSubstr("CONFIG_PSI=absent"));
    EXPECT_THAT(e.what(), Not(HasSubstr("CONFIG_MEMCG")));
  }
}

TEST(OwnImageDir, AnotherKernelWithoutOutIsRefusedWithTheRecipe) {
  const std::string def = "/cache/reclaim-harness/image";
  harness::vm::ImageOptions o;
  EXPECT_NO_THROW(harness::vm::require_own_image_dir(o, def));  // the Debian default into the default image
  o.kernel = "bzImage";
  o.modules = "lib/modules/6.9.0";
  try {
    harness::vm::require_own_image_dir(o, def);
    ADD_FAILURE() << "--kernel without --out was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--kernel without --out would rebuild the default image " + def));
    EXPECT_THAT(e.what(), HasSubstr("an A/A comparison"));
    EXPECT_THAT(e.what(), HasSubstr("--out images/candidate"));
    EXPECT_THAT(e.what(), HasSubstr("variants.candidate.kernel.image_dir: images/candidate"));
    EXPECT_THAT(e.what(), HasSubstr("--as-default"));
  }
  o.out_dir = def;  // naming the default image is the same trap
  EXPECT_THROW(harness::vm::require_own_image_dir(o, def), std::runtime_error);
  o.out_dir = "/tmp/images/candidate";
  EXPECT_NO_THROW(harness::vm::require_own_image_dir(o, def));
  o.out_dir.clear();
  o.as_default = true;
  EXPECT_NO_THROW(harness::vm::require_own_image_dir(o, def));
  harness::vm::ImageOptions p;
  p.kernel_package = "linux-image-6.1.0-56-cloud-amd64";
  EXPECT_THROW(harness::vm::require_own_image_dir(p, def), std::runtime_error);
  p.out_dir = "images/k56";
  EXPECT_NO_THROW(harness::vm::require_own_image_dir(p, def));
}

TEST(OwnImageDir, BuildImageChecksBeforeBuildingAnything) {
  Tmp t;
  const auto bz = t.write("k/bzImage", "kernel");
  const auto mods = t.dir / "m/6.9.0";
  fs::create_directories(mods);
  auto o = debian_cloud();
  o["CONFIG_ZRAM"] = "n";
  t.write("k/.config", config_text(o));
  harness::vm::ImageOptions opts;
  opts.cache_dir = (t.dir / "cache").string();
  opts.kernel = bz.string();
  opts.modules = mods.string();
  // 1. no --out: refused first
  try {
    harness::vm::build_image(opts);
    ADD_FAILURE() << "built without --out";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("without --out"));
  }
  // 2. own directory, but the kernel has no zram: refused, nothing written there
  opts.out_dir = (t.dir / "images/candidate").string();
  try {
    harness::vm::build_image(opts);
    ADD_FAILURE() << "a kernel without zram was built";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("CONFIG_ZRAM=n: needs y or m"));
  }
  EXPECT_FALSE(fs::exists(t.dir / "images"));
  EXPECT_FALSE(fs::exists(t.dir / "cache/image"));
}
