#pragma once
// The error of a spec that parse_spec (spec.hpp) or the arm's resolution (harness/case/control/arm.hpp)
// refuses, naming the offending field.
#include <stdexcept>
#include <string>

namespace harness::case_ {

/// A spec that is malformed (JSON, types, unknown fields) or impossible (rules of SPEC.md).
/// field() is the offending field's dotted path ("" for whole-document errors).
class SpecError : public std::runtime_error {
 public:
  SpecError(std::string field, const std::string& message);
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace harness::case_
