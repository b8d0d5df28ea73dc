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

#include "harness/campaign/check/assertions.hpp"
#include "harness/campaign/model/campaign.hpp"
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

// The whole document byte for byte: the counts, and one testcase of each sort (a passing and a
// failing assertion, a metric of each verdict, an extra case with a failure and one in error),
// each with the provenance properties.
TEST(JUnitXml, WholeDocumentOfEverySortOfTestcase) {
  const test_support::TempDir d("junit-xml-test");
  results::Provenance prov;
  prov.build.version = "0.1.0";
  prov.build.source_commit = "abc";
  prov.build.source_dirty = true;
  prov.command_line = "harness check x";
  prov.generated_utc = "2026-12-01T00:00:00Z";
  hc::AssertionResult ok;
  ok.name = "restoration_clean";
  ok.passed = true;
  ok.cases_checked = 1;
  ok.measured.push_back({"c1", "restoration_clean", 1.0, "clean", true, "c1: restoration clean"});
  hc::CaseRun run;
  run.case_id = "c1";
  run.kernel_release = "6.1.0";
  run.accelerator = "kvm";
  run.started_unix_ns = 1'767'225'600'000'000'000;  // 2026-01-01T00:00:00Z
  run.ended_unix_ns = 1'767'225'660'000'000'000;
  run.attempt = 1;
  ok.runs.push_back(run);
  hc::AssertionResult bad;
  bad.name = "canary_p99_ms <= 50";
  bad.cases_checked = 1;
  bad.failures = {"c2: compute p99 80.00 ms", "c2: no sqlite requests"};
  bad.measured.push_back({"c2", "compute_p99_ms", 80.0, "ms", false, "c2: compute p99 80.00 ms"});
  bad.measured.push_back({"c2", "sqlite_p99_ms", std::nullopt, "ms", false, "c2: no sqlite requests"});
  std::vector<analysis::MetricComparison> metrics(4);
  metrics[0].metric = "sqlite_p99";
  metrics[0].unit = "ms";
  metrics[0].pairs = 6;
  metrics[0].strata = 2;
  metrics[0].baseline_mean = 10;
  metrics[0].candidate_mean = 13.5;
  metrics[0].ratio = 1.35;
  metrics[0].lower = 1.2;
  metrics[0].upper = 1.5;
  metrics[0].level = 0.995;
  metrics[0].max_ratio = 1.1;
  metrics[0].verdict = "regression";
  metrics[0].detail = "ratio 1.35 beyond 1.1";
  metrics[1].metric = "compute_p99";
  metrics[1].unit = "ms";
  metrics[1].verdict = "no data";
  metrics[1].detail = "no pairs";
  metrics[2].metric = "reclaim_s";
  metrics[2].unit = "s";
  metrics[2].level = 0.995;
  metrics[2].verdict = "inconclusive";
  metrics[2].detail = "more pairs";
  metrics[3].metric = "fg_oom";
  metrics[3].unit = "count";
  metrics[3].verdict = "ok";
  metrics[3].detail = "within";
  std::vector<hc::JUnitExtraCase> extra(2);
  extra[0] = {"environment", "kernels", {{"baseline", "6.1"}, {"candidate", "6.2"}}, "same kernel\n", "", "differs"};
  extra[1] = {"environment", "accelerator", {}, "", "no agent", "ignored"};
  const fs::path xml = d / "j.xml";
  hc::write_junit(xml.string(), "ci", {ok, bad}, &prov, &metrics, &extra);

  const std::string p =
      "      <property name=\"harness_version\" value=\"0.1.0\"/>\n"
      "      <property name=\"harness_commit\" value=\"abc+dirty\"/>\n"
      "      <property name=\"plan_sha256\" value=\"unknown\"/>\n"
      "      <property name=\"command_line\" value=\"harness check x\"/>\n";
  auto prop = [](const std::string& n, const std::string& v) {
    return "      <property name=\"" + n + "\" value=\"" + v + "\"/>\n";
  };
  const std::string expected =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuite name=\"ci\" tests=\"8\" failures=\"3\" errors=\"1\" skipped=\"2\" timestamp=\"2026-12-01T00:00:00Z\">\n"
      "  <testcase classname=\"ci\" name=\"restoration_clean\">\n    <properties>\n" + p +
      prop("kernel", "6.1.0") + prop("accelerator", "kvm") + prop("source_commit", "unknown") +
      prop("first_case_started_utc", "2026-01-01T00:00:00Z") + prop("last_case_ended_utc", "2026-01-01T00:01:00Z") +
      prop("cases_checked", "1") + prop("c1.restoration_clean", "1 clean") +
      "    </properties>\n"
      "    <system-out>1 case(s) checked\nok   c1: restoration clean\n"
      "     kernel 6.1.0, accelerator kvm, commit unknown, attempt 1, 2026-01-01T00:00:00Z .. 2026-01-01T00:01:00Z\n"
      "</system-out>\n  </testcase>\n"
      "  <testcase classname=\"ci\" name=\"canary_p99_ms &lt;= 50\">\n    <properties>\n" + p +
      prop("kernel", "unknown") + prop("accelerator", "unknown") + prop("source_commit", "unknown") +
      prop("first_case_started_utc", "unknown") + prop("last_case_ended_utc", "unknown") + prop("cases_checked", "1") +
      prop("c2.compute_p99_ms", "80 ms") + prop("c2.sqlite_p99_ms", "not measured") +
      "    </properties>\n"
      "    <failure message=\"c2: compute p99 80.00 ms\">c2: compute p99 80.00 ms\nc2: no sqlite requests\n</failure>\n"
      "    <system-out>1 case(s) checked\nFAIL c2: compute p99 80.00 ms\nFAIL c2: no sqlite requests\n</system-out>\n"
      "  </testcase>\n"
      "  <testcase classname=\"ci.regression\" name=\"sqlite_p99\">\n    <properties>\n" + p + prop("unit", "ms") +
      prop("pairs", "6") + prop("strata", "2") + prop("baseline_mean", "10") + prop("candidate_mean", "13.5") +
      prop("ratio", "1.35") + prop("lower", "1.2") + prop("upper", "1.5") + prop("level", "0.995") +
      prop("max_ratio", "1.1") + prop("min_ratio", "none") + prop("verdict", "regression") +
      "    </properties>\n"
      "    <failure message=\"sqlite_p99: ratio 1.35 beyond 1.1\">sqlite_p99: ratio 1.35 beyond 1.1</failure>\n"
      "    <system-out>regression: sqlite_p99: ratio 1.35 beyond 1.1\n</system-out>\n  </testcase>\n"
      "  <testcase classname=\"ci.regression\" name=\"compute_p99\">\n    <properties>\n" + p + prop("unit", "ms") +
      prop("pairs", "0") + prop("strata", "0") + prop("baseline_mean", "none") + prop("candidate_mean", "none") +
      prop("ratio", "none") + prop("lower", "none") + prop("upper", "none") + prop("level", "0") +
      prop("max_ratio", "none") + prop("min_ratio", "none") + prop("verdict", "no data") +
      "    </properties>\n"
      "    <skipped message=\"compute_p99: no pairs\"/>\n"
      "    <system-out>no data: compute_p99: no pairs\n</system-out>\n  </testcase>\n"
      "  <testcase classname=\"ci.regression\" name=\"reclaim_s\">\n    <properties>\n" + p + prop("unit", "s") +
      prop("pairs", "0") + prop("strata", "0") + prop("baseline_mean", "none") + prop("candidate_mean", "none") +
      prop("ratio", "none") + prop("lower", "none") + prop("upper", "none") + prop("level", "0.995") +
      prop("max_ratio", "none") + prop("min_ratio", "none") + prop("verdict", "inconclusive") +
      "    </properties>\n"
      "    <skipped message=\"inconclusive: reclaim_s: more pairs\"/>\n"
      "    <system-out>inconclusive: reclaim_s: more pairs\n</system-out>\n  </testcase>\n"
      "  <testcase classname=\"ci.regression\" name=\"fg_oom\">\n    <properties>\n" + p + prop("unit", "count") +
      prop("pairs", "0") + prop("strata", "0") + prop("baseline_mean", "none") + prop("candidate_mean", "none") +
      prop("ratio", "none") + prop("lower", "none") + prop("upper", "none") + prop("level", "0") +
      prop("max_ratio", "none") + prop("min_ratio", "none") + prop("verdict", "ok") +
      "    </properties>\n"
      "    <system-out>ok: fg_oom: within\n</system-out>\n  </testcase>\n"
      "  <testcase classname=\"ci.environment\" name=\"kernels\">\n    <properties>\n" + p + prop("baseline", "6.1") +
      prop("candidate", "6.2") +
      "    </properties>\n"
      "    <failure message=\"differs\">differs</failure>\n"
      "    <system-out>same kernel\n</system-out>\n  </testcase>\n"
      "  <testcase classname=\"ci.environment\" name=\"accelerator\">\n    <properties>\n" + p +
      "    </properties>\n"
      "    <error message=\"no agent\">no agent</error>\n"
      "    <system-out></system-out>\n  </testcase>\n"
      "</testsuite>\n";
  EXPECT_EQ(slurp(xml), expected);
  EXPECT_EQ(parse_xml(xml).rc, 0);
}
