#pragma once
// A scratch directory for a test: created with mkdtemp under /tmp, removed with everything in
// it when the object goes out of scope.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace test_support {

/// mkdtemp("/tmp/<prefix>-XXXXXX"); removed on destruction. Throws std::runtime_error when
/// the directory cannot be created.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "harness-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The path of `f` inside the directory.
  std::string operator/(const std::string& f) const { return path_ + "/" + f; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace test_support
