#pragma once
// Files for the campaign unit tests: a scratch directory removed at scope exit, and
// whole-file read/write.
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/fixed_pin.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/temp_dir.hpp"

namespace testfiles {

/// A scratch directory under /tmp (tests/common/temp_dir.hpp).
class TempDir : public test_support::TempDir {
 public:
  TempDir() : test_support::TempDir("campaign-test") {}
};

/// The file's bytes ("" when unreadable): tests/common/slurp.hpp.
using test_support::slurp;
inline std::string read(const std::string& path) { return slurp(path); }

/// Replaces the file with `text`.
inline void write(const std::string& path, const std::string& text) {
  std::ofstream o(path, std::ios::binary);
  o << text;
}

/// Replaces the token file at `path` with `token`, mode 0600 (the agent client refuses a
/// token file group/others may read, as the agent does).
inline void write_token(const std::string& path, const std::string& token) {
  write(path, token);
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
}

/// A repository campaign's text with a fixed pinned commit: tests/common/fixed_pin.hpp.
using test_support::with_fixed_pin;

/// A hosts file naming vm0..vm<n-1> (agents need not run: `harness plan --hosts` only reads
/// it), written to `path`; returns `path`.
inline std::string hosts_file(const std::string& path, int n) {
  std::string y = "hosts:\n";
  for (int i = 0; i < n; ++i)
    y += "  - {name: vm" + std::to_string(i) + ", url: 'http://127.0.0.1:" + std::to_string(40000 + i) +
         "', token_file: /nonexistent/token}\n";
  testfiles::write(path, y);
  return path;
}

/// hosts_file for vm0..vm8, so the plan does not depend on this machine's capacity (the
/// study's nine guests do not fit a small machine: harness/pool/capacity.hpp).
inline std::string nine_hosts(const std::string& path) { return hosts_file(path, 9); }

}  // namespace testfiles
