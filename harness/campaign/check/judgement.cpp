// What one judgement found, and its verdict (see judgement.hpp).
#include "harness/campaign/check/judgement.hpp"

namespace harness::campaign {

int Judgement::failed_assertions() const {
  int n = 0;
  for (const auto& a : outcome.assertions) n += a.passed ? 0 : 1;
  return n;
}

int Judgement::regressions() const {
  int n = 0;
  for (const auto& m : outcome.metrics) n += m.verdict == "regression" ? 1 : 0;
  return n;
}

int Judgement::inconclusive() const {
  int n = 0;
  for (const auto& m : outcome.metrics) n += m.verdict == "inconclusive" ? 1 : 0;
  return n;
}

CheckVerdict verdict_of(const CheckOutcome& outcome, const std::string& error) {
  if (!outcome.refusal.empty() || !error.empty()) return CheckVerdict::cannot_judge;
  if (outcome.findings()) return CheckVerdict::finding;
  for (const auto& m : outcome.metrics)
    if (m.verdict == "inconclusive") return CheckVerdict::inconclusive;
  return CheckVerdict::ok;
}

}  // namespace harness::campaign
