// report.html in a real browser: `harness analyze --out` of a synthetic k-arm campaign (the
// study's three, senpai, bounded-loop; analysis/simulate/synthetic.hpp), then headless Chromium (Debian's
// /usr/bin/chromium, driven by tests/unit/report/html_render_check.py over the DevTools protocol)
// loads the page: it renders (title, heading, tables) and every figure decodes (naturalWidth > 0),
// the trade-off figure among them. The same check fails on the same page with one figure's bytes
// broken, naming it, and with one figure missing: it can tell. A browser that is not there fails.
#include "analysis/simulate/synthetic.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/small_synthetic.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

struct Ran {
  int code = -1;
  std::string out;
};

Ran run(const std::string& cmd) {
  Ran r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return r;
}

const std::string kCheck = std::string("/usr/bin/python3 ") + HARNESS_SOURCE_DIR + "/tests/unit/report/html_render_check.py";

// The figures harness analyze draws for this campaign: forest, trade-off, p99 by regime, one case's
// time series, zram time course, reclaim execution.
constexpr int kFigures = 6;

}  // namespace

TEST(ReportHtmlBrowser, EveryFigureOfTheReportDecodesInChromium) {
  const fs::path dir = fs::temp_directory_path() / ("hk_report_browser_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "k.db").string();
  analysis::write_synthetic_campaign(db, test_support::five_arm_synthetic());
  const std::string out = (dir / "report").string();
  const Ran a = run(std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness analyze " + db + " --replicates 2000 --out " + out);
  ASSERT_EQ(a.code, 0) << a.out;
  ASSERT_TRUE(fs::exists(out + "/tradeoff.png")) << a.out;
  const std::string html = test_support::slurp(out + "/report.html");
  ASSERT_EQ(html.find("figures not produced"), std::string::npos) << "the figures module must be built";

  // The page as written: rendered, every figure decoded.
  const Ran good = run(kCheck + " " + out + "/report.html --min-images " + std::to_string(kFigures) + " --min-tables 10");
  ASSERT_EQ(good.code, 0) << good.out;
  const auto seen = nlohmann::json::parse(good.out.substr(0, good.out.find('\n')));
  EXPECT_EQ(seen.at("images").size(), static_cast<std::size_t>(kFigures));
  bool tradeoff = false;
  for (const auto& img : seen.at("images")) {
    EXPECT_GT(img.at("naturalWidth").get<int>(), 0) << img.dump();
    tradeoff |= img.at("alt") == "tradeoff.png";
  }
  EXPECT_TRUE(tradeoff) << good.out;
  EXPECT_NE(seen.at("title").get<std::string>().find("Reclaim ablation"), std::string::npos) << seen.dump();

  // The trade-off figure's bytes broken (not a PNG any more): the check fails and names it.
  const std::string head = "<figure><img alt=\"tradeoff.png\" src=\"data:image/png;base64,";
  const auto at = html.find(head);
  ASSERT_NE(at, std::string::npos);
  const auto data = at + head.size(), end = html.find('"', data);
  std::ofstream(out + "/broken.html") << html.substr(0, data) + "bm90IGEgcG5n" + html.substr(end);
  const Ran bad = run(kCheck + " " + out + "/broken.html --min-images " + std::to_string(kFigures));
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("figure tradeoff.png did not decode"), std::string::npos) << bad.out;

  // The trade-off figure left out of the page: one image short, the check fails.
  const std::string tail = "</figure>\n";
  const auto stop = html.find(tail, end) + tail.size();
  std::ofstream(out + "/missing.html") << html.substr(0, at) + html.substr(stop);
  const Ran gone = run(kCheck + " " + out + "/missing.html --min-images " + std::to_string(kFigures));
  EXPECT_EQ(gone.code, 1) << gone.out;
  EXPECT_NE(gone.out.find("5 images, expected at least 6"), std::string::npos) << gone.out;
  fs::remove_all(dir);
}
