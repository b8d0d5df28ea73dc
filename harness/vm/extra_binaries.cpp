// --extra-binary checks (see extra_binaries.hpp).
#include "harness/vm/extra_binaries.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::vm {

const std::vector<std::string>& harness_binary_names() {
  static const std::vector<std::string> names = {"harness",      "harness-agent",  "harness-case",
                                                 "pressure-gen", "canary-compute", "canary-sqlite"};
  return names;
}

std::vector<ImageBinary> check_extra_binaries(const std::vector<std::string>& paths) {
  std::vector<ImageBinary> out;
  std::map<std::string, std::string> seen;  // name -> the --extra-binary that brought it
  for (const auto& given : paths) {
    const std::string flag = "--extra-binary " + given + ": ";
    std::error_code ec;
    const fs::file_status st = fs::status(given, ec);
    if (given.empty() || st.type() == fs::file_type::not_found)
      throw std::runtime_error(flag + "no such file");
    if (ec) throw std::runtime_error(flag + ec.message());
    if (st.type() != fs::file_type::regular) throw std::runtime_error(flag + "not a regular file");
    const auto exec_bits = fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
    if ((st.permissions() & exec_bits) == fs::perms::none) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.permissions() & fs::perms::mask));
      throw std::runtime_error(flag + "not executable (mode " + mode + ")");
    }
    const std::string name = fs::path(given).filename().string();
    for (const auto& h : harness_binary_names())
      if (name == h)
        throw std::runtime_error(flag + "its name " + name + " is a harness binary's (the image's " + h +
                                 " is built by the harness; rename the file)");
    if (auto it = seen.find(name); it != seen.end())
      throw std::runtime_error(flag + "its name " + name + " is also that of --extra-binary " + it->second);
    seen.emplace(name, given);
    out.push_back({name, fs::canonical(given).string()});
  }
  return out;
}

}  // namespace harness::vm
