// Readings of the pilot rule (see pilot_reading.hpp).
#include "analysis/data/pilot_reading.hpp"

#include "harness/text/join.hpp"

namespace analysis {

namespace {
constexpr PilotReading::Restoration kRestorations[] = {PilotReading::Restoration::Clean,
                                                       PilotReading::Restoration::CaseTeardown};
constexpr PilotReading::Eagain kEagains[] = {PilotReading::Eagain::InterfaceError,
                                             PilotReading::Eagain::PartialReclaim};
}  // namespace

const char* name_of(PilotReading::Restoration r) {
  return r == PilotReading::Restoration::Clean ? "clean" : "case-teardown";
}

const char* name_of(PilotReading::Eagain e) {
  return e == PilotReading::Eagain::InterfaceError ? "interface-error" : "partial-reclaim";
}

std::optional<PilotReading::Restoration> restoration_named(const std::string& name) {
  for (auto r : kRestorations)
    if (name == name_of(r)) return r;
  return std::nullopt;
}

std::optional<PilotReading::Eagain> eagain_named(const std::string& name) {
  for (auto e : kEagains)
    if (name == name_of(e)) return e;
  return std::nullopt;
}

std::string restoration_names() {
  return harness::text::join(kRestorations, ", ", [](auto r) { return name_of(r); });
}

std::string eagain_names() {
  return harness::text::join(kEagains, ", ", [](auto e) { return name_of(e); });
}

std::string PilotReading::text() const {
  return std::string("restoration ") + name_of(restoration) + ", EAGAIN " + name_of(eagain);
}

std::vector<PilotReading> all_pilot_readings() {
  std::vector<PilotReading> out;
  for (auto r : kRestorations)
    for (auto e : kEagains) out.push_back({r, e});
  return out;
}

}  // namespace analysis
