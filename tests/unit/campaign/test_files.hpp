#pragma once
// Files for the campaign unit tests: a scratch directory removed at scope exit, and
// whole-file read/write.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace testfiles {

/// mkdtemp("/tmp/campaign-test-XXXXXX"); removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/campaign-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& f) const { return path_ + "/" + f; }

 private:
  std::string path_;
};

/// The file's bytes ("" when unreadable).
inline std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// Replaces the file with `text`.
inline void write(const std::string& path, const std::string& text) {
  std::ofstream o(path, std::ios::binary);
  o << text;
}

/// A repository campaign's text with `pinned_commit: build` replaced by a fixed 40-hex
/// commit, so a test of the CLI does not depend on whether this build is clean.
inline std::string with_fixed_pin(std::string text) {
  const std::string from = "pinned_commit: build";
  const auto at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), "pinned_commit: " + std::string(40, 'c'));
  return text;
}

}  // namespace testfiles
