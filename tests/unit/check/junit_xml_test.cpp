// The JUnit report of `harness check` is well-formed XML 1.0 whatever its messages hold
// (Jenkins and Surefire reject a report with ESC or NUL; console text carries ANSI colours;
// an agent's error can hold any bytes). Checked by a strict XML parser (Python's expat,
// /usr/bin/python3 xml.etree), not by string search:
//   - xml_text: entities, ANSI sequences removed, forbidden characters and bytes that are
//     not UTF-8 written as visible \xNN, valid UTF-8 kept;
//   - write_junit with hostile text in every field it writes parses, and the parsed failure
//     message is the visible text;
//   - the realistic path: an attempt whose error is colourised console output with a NUL and
//     a stray byte, judged by all_cases_completed, then written and parsed.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/campaign/assertions.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/xml/text.hpp"
#include "results/db.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/temp_dir.hpp"

namespace fs = std::filesystem;
namespace hc = harness::campaign;
using test_support::slurp;

namespace {

using namespace std::string_literals;
// ESC, NUL, BEL, a lone continuation byte, a truncated 2-byte sequence, an overlong '/', a
// surrogate, U+FFFE, an ANSI colour (CSI) and a window title (OSC), then valid UTF-8.
const std::string kHostile = "\x1b[1;31mFAIL\x1b[0m nul\0here bell\a "s + "\x80 \xc3 \xc0\xaf \xed\xa0\x80 \xef\xbf\xbe " +
                             "\x1b]0;title\a<tag> & \"q\" \r\n\xc2\xb5s caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x92\xbe";
// What a reader sees of it after parsing (CR kept as &#13;).
const std::string kVisible = "FAIL nul\\x00here bell\\x07 \\x80 \\xc3 \\xc0\\xaf \\xed\\xa0\\x80 \\xef\\xbf\\xbe "
                             "<tag> & \"q\" \r\n\xc2\xb5s caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x92\xbe";

/// `s` as a parser reports an attribute value holding it: XML 1.0 attribute-value
/// normalisation turns a literal LF or tab into a space (CR travels as &#13; and stays).
std::string attr(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  return s;
}

struct Parsed {
  int rc = -1;
  std::string out;  ///< JSON: {"failures": [message...], "properties": {name: value}, "tests": N}
};

/// Parses `path` with Python's expat (strict XML 1.0) and lists what the test compares.
Parsed parse_xml(const fs::path& path) {
  const std::string py =
      "import json,sys,xml.etree.ElementTree as E\n"
      "r=E.parse(sys.argv[1]).getroot()\n"
      "print(json.dumps({'tests':int(r.get('tests')),'failures':[f.get('message') for f in r.iter('failure')],"
      "'bodies':[f.text for f in r.iter('failure')],'names':[t.get('name') for t in r.iter('testcase')],"
      "'properties':{p.get('name'):p.get('value') for p in r.iter('property')},"
      "'out':[s.text for s in r.iter('system-out')]}))\n";
  const fs::path script = path.string() + ".py", out = path.string() + ".parsed";
  std::ofstream(script) << py;
  Parsed p;
  const std::string cmd = "/usr/bin/python3 " + script.string() + " " + path.string() + " > " + out.string() + " 2>&1";
  const int st = std::system(cmd.c_str());
  p.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  p.out = slurp(out);
  return p;
}

}  // namespace

TEST(XmlText, EscapesStripsAndMarksExactly) {
  EXPECT_EQ(harness::xml::xml_text("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
  EXPECT_EQ(harness::xml::xml_text("it's"), "it&apos;s");  // single-quoted attributes (libvirt XML)
  EXPECT_EQ(harness::xml::xml_text("\x1b[31mred\x1b[0m \x1b[2K\x1b]0;t\x1b\\ok"), "red ok");
  EXPECT_EQ(harness::xml::xml_text("nul\0x"s), "nul\\x00x");
  EXPECT_EQ(harness::xml::xml_text("\x1b"), "\\x1b");           // a lone ESC is not a sequence
  EXPECT_EQ(harness::xml::xml_text("\x1b[31"), "\\x1b[31");     // nor an unfinished one
  EXPECT_EQ(harness::xml::xml_text("tab\tlf\ncr\r"), "tab\tlf\ncr&#13;");
  EXPECT_EQ(harness::xml::xml_text("\x7f"), "\x7f");            // DEL is an XML 1.0 Char
  EXPECT_EQ(harness::xml::xml_text("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(harness::xml::xml_text("\xe2\x82"), "\\xe2\\x82");  // truncated sequence
  EXPECT_EQ(harness::xml::xml_text("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");  // overlong
  EXPECT_EQ(harness::xml::xml_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // beyond U+10FFFF
  EXPECT_EQ(harness::xml::xml_text("\xef\xbf\xbf"), "\\xef\\xbf\\xbf");  // U+FFFF
  EXPECT_EQ(harness::xml::xml_text("\xc2\xb5 \xe6\xbc\xa2 \xf0\x9f\x92\xbe \xef\xbf\xbd"),
            "\xc2\xb5 \xe6\xbc\xa2 \xf0\x9f\x92\xbe \xef\xbf\xbd");  // valid UTF-8, U+FFFD included
}

TEST(JUnitXml, HostileTextInEveryFieldStillParsesAsXml10) {
  const test_support::TempDir d("junit-xml-test");
  hc::AssertionResult r;
  r.name = "restoration_clean " + kHostile;
  r.cases_checked = 1;
  r.failures = {"c1: " + kHostile};
  r.measured.push_back({"c1" + kHostile, "state", 0.0, "state", false, "c1: " + kHostile});
  hc::CaseRun run;
  run.case_id = "c1" + kHostile;
  run.kernel_release = "6.1" + kHostile;
  run.accelerator = "tcg";
  run.source_commit = kHostile;
  run.started_unix_ns = 1'767'225'600'000'000'000;
  r.runs.push_back(run);
  results::Provenance prov;
  prov.build.version = "0.1.0";
  prov.command_line = "harness check " + kHostile;
  prov.generated_utc = "2026-12-01T00:00:00Z";
  analysis::MetricComparison m;
  m.metric = "sqlite_p99";
  m.unit = "ms";
  m.verdict = "regression";
  m.detail = kHostile;
  std::vector<analysis::MetricComparison> metrics{m};
  const fs::path xml = d / "j.xml";
  hc::write_junit(xml.string(), "ci " + kHostile, {r}, &prov, &metrics);

  const auto p = parse_xml(xml);
  ASSERT_EQ(p.rc, 0) << "not well-formed XML 1.0:\n" << p.out << "\n--- file:\n" << slurp(xml);
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["tests"], 2);
  ASSERT_EQ(j["failures"].size(), 2u);
  EXPECT_EQ(j["failures"][0], attr("c1: " + kVisible));
  EXPECT_EQ(j["failures"][1], attr("sqlite_p99: " + kVisible));
  EXPECT_EQ(j["bodies"][0], "c1: " + kVisible + "\n");  // element text keeps LF
  EXPECT_EQ(j["names"][0], attr("restoration_clean " + kVisible));
  EXPECT_EQ(j["properties"]["command_line"], attr("harness check " + kVisible));
  EXPECT_EQ(j["properties"]["kernel"], attr("6.1" + kVisible));
}

TEST(JUnitXml, ColourisedConsoleErrorOfAnAttemptParsesAsXml10) {
  const test_support::TempDir d("junit-xml-test");
  const fs::path yaml = d / "c.yaml", dbp = d / "c.db";
  {
    std::string y = slurp(std::string(HARNESS_SOURCE_DIR) + "/tests/vm/check/ci-triplet.yaml");
    y = y.substr(0, y.find("\nassertions:")) + "\nassertions:\n  - kind: all_cases_completed\n";
    std::ofstream(yaml) << y;
  }
  const std::string console =
      "agent lost: guest console said \x1b[0;31m[FAILED]\x1b[0m Failed to start\0 \xff\xfe swap\r\n"s;
  {
    results::Db db(dbp.string(), results::Db::Mode::Create);
    db.exec("INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, configuration, state) "
            "VALUES ('c1', 1, 'vm0', 'fast-random', 1, 'static-zram', 'lost')");
    results::Stmt a(db, "INSERT INTO attempts(case_id, attempt, host, status, error) VALUES ('c1', 1, 'vm0', 'lost', ?1)");
    a.bind(1, console);
    a.run();
  }
  const hc::Campaign c = hc::load_campaign(yaml.string());
  results::Db db(dbp.string(), results::Db::Mode::ReadOnly);
  const auto res = hc::evaluate_assertions(db, c);
  ASSERT_EQ(res.size(), 1u);
  ASSERT_FALSE(res[0].passed);
  const fs::path xml = d / "j.xml";
  hc::write_junit(xml.string(), c.name, res);
  const auto p = parse_xml(xml);
  ASSERT_EQ(p.rc, 0) << "not well-formed XML 1.0:\n" << p.out << "\n--- file:\n" << slurp(xml);
  const auto j = nlohmann::json::parse(p.out);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0],
            attr("c1: lost: agent lost: guest console said [FAILED] Failed to start\\x00 \\xff\\xfe swap\r\n"));
}
