// Error types of hk_kernel (errors.hpp).
#include "harness/kernel/errors.hpp"

#include <cstring>

namespace kernel {

IoError::IoError(std::string path, int err, const std::string& what_op)
    : Error(what_op + " " + path + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")"),
      path_(std::move(path)),
      err_(err) {}

ParseError::ParseError(std::string file, int line, std::string field, const std::string& detail)
    : Error(file + ":" + std::to_string(line) + ": field '" + field + "': " + detail),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)) {}

}  // namespace kernel
