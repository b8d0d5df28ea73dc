// One bounded memory.reclaim write with before/after/settled readings (docs/DESIGN.md "Controller").
#include "harness/case/control/reclaim_action.hpp"

#include <time.h>

#include <stdexcept>

#include "harness/case/host/confounds.hpp"
#include "harness/kernel/errors.hpp"

namespace harness::case_ {

ReclaimAction::ReclaimAction(harness::kernel::Cgroup bg, std::int64_t settle_ns) : bg_(std::move(bg)), settle_ns_(settle_ns) {}

ReclaimAction::~ReclaimAction() {
  if (thread_.joinable()) thread_.join();
}

void ReclaimAction::start(std::int64_t requested_bytes, std::optional<PgstealRate> concurrent_rate) {
  if (started()) throw std::logic_error("ReclaimAction::start: the action runs at most once per case");
  thread_ = std::thread(
      [this, requested_bytes, concurrent_rate] { record_ = run(bg_, requested_bytes, settle_ns_, concurrent_rate); });
}

std::optional<ReclaimRecord> ReclaimAction::join() {
  if (thread_.joinable()) thread_.join();
  return record_;
}

namespace {
struct Counters {
  std::optional<std::int64_t> pgsteal, pgscan, proactive, current;
};
Counters read_counters(const harness::kernel::Cgroup& bg, bool with_current) {
  Counters c;
  try {
    auto m = bg.memory_stat();
    if (auto v = m.pgsteal()) c.pgsteal = static_cast<std::int64_t>(*v);
    if (auto v = m.pgscan()) c.pgscan = static_cast<std::int64_t>(*v);
    if (auto v = m.all.get("pgsteal_proactive")) c.proactive = static_cast<std::int64_t>(*v);
  } catch (const harness::kernel::Error&) {
    // counters stay NULL (unknown), never 0
  }
  if (with_current) {
    try {
      c.current = static_cast<std::int64_t>(bg.memory_current_bytes());
    } catch (const harness::kernel::Error&) {
      // memory.current stays NULL (unknown), never 0
    }
  }
  return c;
}
}  // namespace

ReclaimRecord ReclaimAction::run(const harness::kernel::Cgroup& bg, std::int64_t requested_bytes, std::int64_t settle_ns,
                                 std::optional<PgstealRate> concurrent_rate) {
  ReclaimRecord r;
  r.requested_bytes = requested_bytes;
  auto before = read_counters(bg, true);
  const std::int64_t cpu0 = thread_cpu_ns();
  auto res = bg.reclaim(static_cast<std::uint64_t>(requested_bytes));
  r.write_cpu_ns = thread_cpu_ns() - cpu0;
  auto after = read_counters(bg, true);
  r.start_ns = res.start_ns;
  r.end_ns = res.end_ns;
  r.write_errno = res.write.err;
  r.pgsteal_before = before.pgsteal;
  r.pgscan_before = before.pgscan;
  r.bg_current_before_bytes = before.current;
  r.pgsteal_after = after.pgsteal;
  r.pgscan_after = after.pgscan;
  r.bg_current_after_bytes = after.current;
  if (before.proactive && after.proactive) {
    r.counter = "pgsteal_proactive";
    r.counter_before = before.proactive;
    r.counter_after = after.proactive;
  } else {
    r.counter = "pgsteal";
    r.counter_before = before.pgsteal;
    r.counter_after = after.pgsteal;
    r.concurrent_rate = concurrent_rate;
  }
  if (settle_ns > 0) {
    struct timespec ts{static_cast<time_t>(settle_ns / 1'000'000'000), static_cast<long>(settle_ns % 1'000'000'000)};
    while (::nanosleep(&ts, &ts) != 0) {
    }
  }
  auto settled = read_counters(bg, false);
  r.pgsteal_settled = settled.pgsteal;
  r.pgscan_settled = settled.pgscan;
  return r;
}

}  // namespace harness::case_
