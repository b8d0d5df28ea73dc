// Error types of hk_kernel (errors.hpp).
#include "harness/kernel/errors.hpp"

#include <cstring>

namespace kernel {

namespace {
// Built with append() rather than operator+ chains (GCC 12 -Wrestrict false positive).
std::string io_message(const std::string& op, const std::string& path, int err) {
  std::string m;
  m.append(op).append(" ").append(path).append(": ").append(std::strerror(err));
  m.append(" (errno ").append(std::to_string(err)).append(")");
  return m;
}
std::string parse_message(const std::string& file, int line, const std::string& field, const std::string& detail) {
  std::string m;
  m.append(file).append(":").append(std::to_string(line)).append(": field '").append(field).append("': ");
  m.append(detail);
  return m;
}
}  // namespace

IoError::IoError(std::string path, int err, const std::string& what_op)
    : Error(io_message(what_op, path, err)), path_(std::move(path)), err_(err) {}

ParseError::ParseError(std::string file, int line, std::string field, const std::string& detail)
    : Error(parse_message(file, line, field, detail)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)) {}

}  // namespace kernel
