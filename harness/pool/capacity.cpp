// Capacity before anything boots (see capacity.hpp).
#include "harness/pool/capacity.hpp"

#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace harness::pool {
namespace {

std::string names(const std::vector<std::string>& v) {
  std::string s;
  const std::size_t shown = std::min<std::size_t>(v.size(), 12);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > shown) s += fmt::format(", ... ({} in all)", v.size());
  return s;
}

}  // namespace

std::optional<bool> CapacityVerdict::overcommitted(const std::string& host) const {
  for (const auto& h : hosts)
    if (h.capacity.host == host ||
        std::find(h.capacity.aliases.begin(), h.capacity.aliases.end(), host) != h.capacity.aliases.end())
      return h.judged ? std::optional<bool>(h.over) : std::nullopt;
  return std::nullopt;
}

std::string CapacityVerdict::refusal(const std::string& allow) const {
  if (ok) return "";
  std::string s = "capacity: the guests do not fit their host(s); refused before anything boots:\n";
  for (const auto& p : problems) s += "  " + p + "\n";
  s += "Run the guests on hosts that have the room (real VMs: `--hosts FILE`, harness/vm/HOSTS.md; or another "
       "engine, harness/pool/README.md), use fewer guests, or " + allow + " (every case then records "
       "cases.overcommitted = 1 and the report warns: timings include the guests' contention).\n";
  return s;
}

CapacityVerdict check_capacity(const std::vector<HostCapacity>& hosts, GuestShape shape, bool overcommit,
                               const std::string& engine) {
  CapacityVerdict v;
  v.overcommit_allowed = overcommit;
  for (const auto& h : hosts) {
    HostVerdict x;
    x.capacity = h;
    x.guest_vcpus = static_cast<int>(h.guests.size() + h.others.size()) * shape.vcpus;
    std::size_t booting = 0;
    for (const auto& g : h.guests)
      if (std::find(h.running.begin(), h.running.end(), g) == h.running.end()) ++booting;
    x.guest_memory_mib = static_cast<std::int64_t>(booting) * shape.memory_mib;
    x.judged = h.unreachable.empty() && h.cores > 0 && h.memory_mib > 0;
    if (!h.unreachable.empty()) v.unreachable.push_back(h.host + ": " + h.unreachable);
    if (x.judged) {
      std::vector<std::string> over;
      if (x.guest_vcpus > h.cores - 1)
        over.push_back(fmt::format("{} guest vCPU(s) > {} online core(s) - 1", x.guest_vcpus, h.cores));
      if (x.guest_memory_mib > h.memory_mib)
        over.push_back(fmt::format("{} MiB of guests to boot > {} MiB available", x.guest_memory_mib, h.memory_mib));
      x.over = !over.empty();
      if (x.over) {
        const std::string host = h.aliases.empty() ? h.host : h.host + " (= " + names(h.aliases) + ")";
        x.why = fmt::format("host {}: {} guest(s) ({}) of {} vCPU / {} MiB", host, h.guests.size(), names(h.guests),
                            shape.vcpus, shape.memory_mib);
        if (!h.others.empty()) x.why += fmt::format(" plus {} other running guest(s) ({})", h.others.size(), names(h.others));
        if (!h.running.empty()) x.why += fmt::format(", {} of them already running", h.running.size());
        x.why += fmt::format(", on {} online core(s) (at most {} guest vCPU(s): cores - 1) and {} MiB available: ",
                             h.cores, std::max(0, h.cores - 1), h.memory_mib);
        x.why += text::join(over, "; ");
        v.problems.push_back(x.why);
      }
    }
    v.hosts.push_back(std::move(x));
  }
  v.ok = v.problems.empty() || overcommit;
  // The table.
  std::size_t w = 4;
  for (const auto& h : v.hosts) w = std::max(w, h.capacity.host.size());
  v.table = fmt::format("capacity before anything boots (engine {}; rule: guest vCPUs <= cores - 1 and guest memory "
                        "<= available, per host):\n",
                        engine);
  v.table += fmt::format("  {:<{}}  {:>6}  {:>11}  {:>5}  {:>9}  {:>13}  {}\n", "host", w, "guests", "guest vCPUs",
                         "cores", "guest MiB", "available MiB", "verdict");
  for (const auto& h : v.hosts) {
    const auto& c = h.capacity;
    const std::string verdict = c.no_answer_s > 0 ? fmt::format("not judged: no answer in {} s; judged again at run",
                                                                c.no_answer_s)
                                : !c.unreachable.empty() ? "not judged: host " + c.host + " unreachable; judged again at run"
                                : !h.judged ? "not judged (cores and memory unknown to this engine)"
                                : !h.over ? "fits"
                                : overcommit ? "OVERCOMMITTED (provider.overcommit: true)"
                                             : "REFUSED";
    v.table += fmt::format("  {:<{}}  {:>6}  {:>11}  {:>5}  {:>9}  {:>13}  {}\n", c.host.empty() ? "?" : c.host, w,
                           c.guests.size() + c.others.size(), h.guest_vcpus, c.cores > 0 ? std::to_string(c.cores) : "?",
                           h.guest_memory_mib, c.memory_mib > 0 ? std::to_string(c.memory_mib) : "?", verdict);
  }
  for (const auto& h : v.hosts)
    for (const auto& a : h.capacity.aliases)
      v.table += "  " + a + " is the same machine as " + h.capacity.host + " (its guests are counted there)\n";
  for (const auto& p : v.problems) v.table += "  " + std::string(overcommit ? "overcommitted: " : "over: ") + p + "\n";
  for (const auto& u : v.unreachable) v.table += "  unreachable: " + u + "\n";
  return v;
}

}  // namespace harness::pool
