// The seam of harness-import-pause, a test build of the `harness` CLI (the same objects,
// plus this file): when $HARNESS_TEST_PAUSE_AT is "import:<marker file>", the runner, on
// reaching the import of a bundle (inside its transaction, every row written, not yet
// committed: harness/campaign/store/campaign_db.hpp set_import_observer), writes the case id to
// the marker file and sleeps 600 s, so that takeover_vm_test.cpp can kill -9 it exactly
// there. The shipped `harness` has no such variable: the pause exists only in this binary.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "harness/campaign/store/campaign_db.hpp"

namespace {

void pause_in_import(const std::string& case_id) {
  const char* env = std::getenv("HARNESS_TEST_PAUSE_AT");
  if (!env) return;
  const std::string v = env;
  const std::string prefix = "import:";
  if (v.rfind(prefix, 0) != 0) return;
  {
    std::ofstream m(v.substr(prefix.size()));
    m << case_id << "\n";
  }
  std::this_thread::sleep_for(std::chrono::seconds(600));
}

const bool kInstalled = (harness::campaign::set_import_observer(&pause_in_import), true);

}  // namespace
