// `harness init KIND DIR` and `harness init --list`: a repository campaign copied out of the
// tree for the researcher to edit (harness/campaign/commands/campaign_copy.hpp).
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "harness/campaign/commands/campaign_copy.hpp"
#include "harness/cli/exit_codes.hpp"
#include "registry.hpp"

#ifndef HARNESS_CAMPAIGNS_DIR
#error "HARNESS_CAMPAIGNS_DIR (the source tree's campaigns/) is set by harness/cli/CMakeLists.txt"
#endif

static const bool kInitRegistered = harness::cli::register_commands("init", [](CLI::App& app) {
  auto* sub = app.add_subcommand(
      "init", "Copy a repository campaign (KIND.yaml of the campaigns folder) into DIR to edit there, paths relative to campaigns/ "
              "rewritten so they still resolve; refuses to overwrite; prints what to edit next");
  auto kind = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  auto from = std::make_shared<std::string>(HARNESS_CAMPAIGNS_DIR);
  sub->add_option("KIND", *kind, "a repository campaign by its file's stem (`harness init --list`), e.g. confirmatory");
  sub->add_option("DIR", *dir, "directory to write KIND.yaml into (created when missing)");
  sub->add_flag("--list", *list, "list the repository's campaigns (KIND and the first line of each file) and exit");
  sub->add_option("--campaigns", *from, "the campaigns folder to copy from")->capture_default_str();
  sub->callback([=] {
    if (*list) {
      // KIND in a column of 19, the summary's whole first sentence wrapped at 100 columns under it.
      for (const auto& r : harness::campaign::repository_campaigns(*from)) {
        std::string line = r.kind + std::string(r.kind.size() < 18 ? 19 - r.kind.size() : 1, ' ');
        std::istringstream words(r.summary);
        for (std::string w; words >> w;) {
          if (line.size() > 19 && line.size() + 1 + w.size() > 100) {
            std::printf("%s\n", line.c_str());
            line = std::string(19, ' ');
          }
          line += (line.back() == ' ' ? "" : " ") + w;
        }
        std::printf("%s\n", line.c_str());
      }
      return;
    }
    if (kind->empty() || dir->empty()) throw CLI::RequiredError("KIND and DIR (`harness init KIND DIR`; kinds: `harness init --list`)");
    const auto c = harness::campaign::init_campaign(*kind, *from, *dir);
    std::printf("wrote %s (a copy of %s/%s.yaml)\n", c.path.c_str(), from->c_str(), kind->c_str());
    for (const auto& r : c.relocated)
      std::printf("  line %d: %s %s -> %s (relative to campaigns/, now absolute)\n", r.line, r.field.c_str(),
                  r.from.c_str(), r.to.c_str());
    std::fputs(c.next.c_str(), stdout);
  });
});
