#pragma once
// A case bundle's identity, for the tests that write bundles (harness::case_::write_bundle) and read
// them back: tests/unit/case/bundle_test.cpp, tests/unit/calibrate/calibrate_test.cpp.
// Header-only; include as "tests/common/case_bundle.hpp".
#include <string>

#include "harness/case/run/bundle.hpp"

namespace test_support {

/// A completed bundle of case `case_id` in `campaign` on vm0 with an empty spec ("{}"); the
/// caller sets the rest (repeat, dose, rows...).
inline harness::case_::CaseBundle completed_bundle(const std::string& case_id, const std::string& campaign,
                                          const std::string& regime, const std::string& configuration) {
  harness::case_::CaseBundle b;
  b.case_id = case_id;
  b.campaign = campaign;
  b.vm = "vm0";
  b.regime = regime;
  b.configuration = configuration;
  b.status = "completed";
  b.spec_json = "{}";
  return b;
}

}  // namespace test_support
