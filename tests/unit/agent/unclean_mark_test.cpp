// The unclean mark (harness/agent/cases/unclean_mark.hpp) over a state directory the test makes.
#include "harness/agent/cases/unclean_mark.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace {
using namespace harness::agent;
using nlohmann::json;
namespace fs = std::filesystem;

TEST(UncleanMark, WrittenReadAndCleared) {
  test_support::TempDir tmp("unclean");
  UncleanMark m(tmp.path());
  EXPECT_TRUE(m.read().is_null());
  m.write("case-u", json::array({"swap still on", "cgroup left"}));
  ASSERT_TRUE(fs::exists(fs::path(tmp.path()) / "unclean.json"));
  const json u = m.read();
  EXPECT_EQ(u["case_id"], "case-u");
  EXPECT_EQ(u["problems"].size(), 2u);
  EXPECT_TRUE(u["marked_unix_s"].is_number_integer());
  EXPECT_FALSE(u.contains("not_written"));
  EXPECT_EQ(UncleanMark::message(u),
            "VM unusable: the restoration of case case-u was unclean (swap still on; cgroup left); fix the VM "
            "(or reboot it), then clear the mark with DELETE /v1/unclean");
  json cleared;
  EXPECT_EQ(m.clear(cleared), UncleanMark::Cleared::Done);
  EXPECT_EQ(cleared["case_id"], "case-u");
  EXPECT_TRUE(m.read().is_null());
  EXPECT_EQ(m.clear(cleared), UncleanMark::Cleared::NotMarked);
}

TEST(UncleanMark, AMarkThatCannotBeWrittenIsKeptInMemoryAndSaysWhy) {
  test_support::TempDir tmp("unclean");
  fs::create_symlink("/nonexistent-directory/unclean.json", fs::path(tmp.path()) / "unclean.json.tmp");
  UncleanMark m(tmp.path());
  m.write("case-w", json::array({"zram left"}));
  EXPECT_FALSE(fs::exists(fs::path(tmp.path()) / "unclean.json"));
  const json held = m.held_in_memory();
  ASSERT_TRUE(held.is_object());
  EXPECT_TRUE(held["not_written"].is_string());
  EXPECT_EQ(m.read(), held);
  EXPECT_NE(UncleanMark::message(held).find("(the mark could not be written: "), std::string::npos);
  json cleared;
  EXPECT_EQ(m.clear(cleared), UncleanMark::Cleared::Done);
  EXPECT_TRUE(m.read().is_null());
}

// The runner reads the mark from a health answer: the same sentence as the agent's 412,
// without its "VM unusable: "; nothing when the answer carries no mark.
TEST(UncleanMark, ReasonInAHealthAnswerIsTheAgentsSentence) {
  const json mark = {{"case_id", "case-u"}, {"problems", {"swap still on"}}};
  EXPECT_EQ(UncleanMark::reason_in_health({{"status", "ok"}, {"unclean", mark}}),
            "the restoration of case case-u was unclean (swap still on); fix the VM (or reboot it), then clear the "
            "mark with DELETE /v1/unclean");
  EXPECT_EQ("VM unusable: " + UncleanMark::reason_in_health({{"unclean", mark}}), UncleanMark::message(mark));
  EXPECT_EQ(UncleanMark::reason_in_health({{"status", "ok"}, {"unclean", nullptr}}), "");
  EXPECT_EQ(UncleanMark::reason_in_health({{"status", "ok"}}), "");
  EXPECT_EQ(UncleanMark::reason_in_health(json::array()), "");
}

TEST(UncleanMark, AFileThatIsNotAMarkStillReadsAsOne) {
  test_support::TempDir tmp("unclean");
  const fs::path f = fs::path(tmp.path()) / "unclean.json";
  { std::ofstream(f) << "[1,2]"; }
  UncleanMark m(tmp.path());
  EXPECT_TRUE(m.read()["case_id"].is_null());
  EXPECT_EQ(m.read()["problems"][0], "unclean.json is not a JSON object");
  fs::remove(f);
  ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
  const json u = m.read();  // opened without blocking
  EXPECT_NE(u["problems"][0].get<std::string>().find("unclean.json unreadable: "), std::string::npos) << u.dump();
  EXPECT_NE(UncleanMark::message(u).find("case ? was unclean"), std::string::npos);
}

}  // namespace
