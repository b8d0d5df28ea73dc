#pragma once
// A scratch directory for write tests (removed at destruction). Writes never touch the
// fixture trees: tests that write copy what they need here first.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/slurp.hpp"

namespace kernel_test {
class TmpTree {
 public:
  TmpTree() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hk-kernel-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  ~TmpTree() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::filesystem::path& dir() const { return dir_; }
  /// Creates `rel` (and parents) with `text`.
  void put(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  std::string get(const std::string& rel) const {
    return test_support::slurp(dir_ / rel);
  }
  /// Copies a fixture tree into this scratch dir.
  void copy_from(const std::string& src) const {
    std::filesystem::copy(src, dir_, std::filesystem::copy_options::recursive);
  }

 private:
  std::filesystem::path dir_;
};
}  // namespace kernel_test
