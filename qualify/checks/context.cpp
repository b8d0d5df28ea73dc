// The pieces every qualification check shares (context.hpp).
#include "qualify/checks/context.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>

#include <harness/build_info.hpp>

#include "harness/kernel/kernel.hpp"
#include "harness/text/join.hpp"
#include "harness/text/shell_quote.hpp"

namespace qualify::checks {

using harness::text::shell_quote;

std::string mib(std::uint64_t bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return b;
}

void guarded(Check& c, const std::function<void()>& body, const std::string& fix_on_error) {
  try {
    body();
  } catch (const std::exception& e) {
    c.passed = false;
    c.found = e.what();
    c.fix = fix_on_error;
  }
}

// The value of the last `name=` parameter on the kernel command line (the kernel honours the
// last), nullopt when absent or /proc/cmdline is unreadable.
std::optional<std::string> cmdline_param(const Ctx& x, const std::string& name) {
  std::optional<std::string> v;
  try {
    std::istringstream in(harness::kernel::kernel_cmdline(x.fs));
    for (std::string w; in >> w;)
      if (w.rfind(name + "=", 0) == 0) v = w.substr(name.size() + 1);
  } catch (const std::exception&) {
    // no readable cmdline: the parameter is reported absent
  }
  return v;
}

// kstrtobool's false: 0, n, N, off (and "no", "false" as people write them).
bool is_false_word(const std::string& v) {
  return v == "0" || v == "n" || v == "N" || v == "off" || v == "no" || v == "false";
}

}  // namespace qualify::checks
