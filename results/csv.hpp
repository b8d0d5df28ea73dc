#pragma once
// CSV quoting shared by every CSV the harness writes (`harness export`, the analysis report's
// <table>.csv). RFC 4180: a field containing a comma, double quote, CR or LF is enclosed in
// double quotes with each inner double quote doubled; any other field is written as is. (ours)
#include <string>

namespace results {

/// One CSV field for `s` (see file comment). Never throws except std::bad_alloc.
std::string csv_field(const std::string& s);

}  // namespace results
