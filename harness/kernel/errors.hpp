#pragma once
// Error types of the kernel-interface layer (docs/DESIGN.md "The kernel-interface layer").
//
// Reads that fail throw IoError (carries errno and the full path); files whose text
// does not match the documented kernel format throw ParseError (names file, 1-based
// line and field). Writes never throw for kernel refusals: they return
// harness::kernel::WriteResult (errno as data, see fs.hpp).
#include <stdexcept>
#include <string>

namespace harness::kernel {

/// Symbolic name of an errno value ("ENOMEM", "EBUSY"); "errno <n>" when unknown, "0" for 0.
std::string errno_name(int err);

/// Base of every error thrown by hk_kernel.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A read (open/read/opendir/statvfs/stat) failed. `err` is the errno (e.g. ENOENT when
/// PSI or a cgroup file is absent, EOPNOTSUPP when PSI is compiled in but disabled).
class IoError : public Error {
 public:
  IoError(std::string path, int err, const std::string& what_op);
  const std::string& path() const { return path_; }
  int err() const { return err_; }

 private:
  std::string path_;
  int err_;
};

/// Text of a kernel file did not match its documented format.
/// what() = "<file>:<line>: field '<field>': <detail>"; line is 1-based, 0 = whole file.
class ParseError : public Error {
 public:
  ParseError(std::string file, int line, std::string field, const std::string& detail);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  std::string file_;
  int line_;
  std::string field_;
};

}  // namespace harness::kernel
