// Error types of hk_kernel (errors.hpp).
#include "harness/kernel/errors.hpp"

#include <cstring>

#include <fmt/format.h>

namespace harness::kernel {

namespace {
std::string io_message(const std::string& op, const std::string& path, int err) {
  return fmt::format("{} {}: {} ({}, errno {})", op, path, std::strerror(err), errno_name(err), err);
}
std::string parse_message(const std::string& file, int line, const std::string& field, const std::string& detail) {
  return fmt::format("{}:{}: field '{}': {}", file, line, field, detail);
}
}  // namespace

std::string errno_name(int err) {
  if (err == 0) return "0";
  if (const char* n = ::strerrorname_np(err)) return n;
  return fmt::format("errno {}", err);
}

IoError::IoError(std::string path, int err, const std::string& what_op)
    : Error(io_message(what_op, path, err)), path_(std::move(path)), err_(err) {}

ParseError::ParseError(std::string file, int line, std::string field, const std::string& detail)
    : Error(parse_message(file, line, field, detail)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)) {}

}  // namespace harness::kernel
