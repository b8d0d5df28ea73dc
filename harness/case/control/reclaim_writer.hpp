#pragma once
// Repeated memory.reclaim writes for policies that reclaim more than once per case (senpai,
// memflux-guard, bounded-loop): one write in flight at a time, each on its own thread,
// because a write blocks (seconds under TCG) and the controller's tick must not. Each write
// is ReclaimAction::run (the same readings, settle and arithmetic as the study's single
// write, reclaim_action.hpp); its record becomes a `reclaim_end` event and a reclaim_actions
// row (many rows per case: the table's key is (case_id, start_ns)).
//
// Use from the tick: busy() before deciding, start() to write, collect() every tick to turn
// finished writes into events and rows (record_writes), wait() in finish().
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/control/background_write.hpp"
#include "harness/case/run/bundle.hpp"
#include "harness/case/control/reclaim_record.hpp"
#include "harness/kernel/cgroup.hpp"

namespace harness::case_ {

class ReclaimWriter {
 public:
  /// `settle_ns`: how long after each write its settled reading is taken (ReclaimAction::run;
  /// the executor's reclaim_settle_ns, 2.2 s). The writer stays busy until then, so the next
  /// write never starts inside the previous one's settle.
  ReclaimWriter(harness::kernel::Cgroup bg, std::int64_t settle_ns);
  /// Waits for a write in flight (its record is then lost: call wait() first to keep it).
  ~ReclaimWriter() = default;
  ReclaimWriter(const ReclaimWriter&) = delete;
  ReclaimWriter& operator=(const ReclaimWriter&) = delete;

  /// A write (or its settle) is in flight.
  bool busy() const;
  /// Starts one write of `bytes` (> 0) on its own thread; std::logic_error when busy() or
  /// bytes <= 0. `concurrent_rate`: bg pgsteal over the windows before it (pgsteal_rate_before).
  void start(std::int64_t bytes, std::optional<PgstealRate> concurrent_rate = std::nullopt);
  /// A finished write: `seq` = its place in start order (1 = the first write of the case).
  struct Finished {
    int seq = 0;
    ReclaimRecord record;
  };
  /// The writes that have finished since the last collect(), in start order; never blocks.
  std::vector<Finished> collect();
  /// Waits for the write in flight, then collect().
  std::vector<Finished> wait();
  /// Writes started so far (the seq of the latest).
  int started() const { return started_; }

  /// Tests only: while one exists, start() runs the write on the caller's thread (so a
  /// test over simulated ticks sees each write finished at the next tick, deterministically).
  class InlineScope {
   public:
    InlineScope();
    ~InlineScope();
    InlineScope(const InlineScope&) = delete;
    InlineScope& operator=(const InlineScope&) = delete;
  };

 private:
  void join_finished();

  harness::kernel::Cgroup bg_;
  std::int64_t settle_ns_;
  BackgroundWrite<Finished> write_;  ///< busy until the write and its settle returned
  std::vector<Finished> finished_;
  int started_ = 0;
};

/// The reclaim_end event of a finished write: at its end_ns, detail = the record's to_json
/// with `tag`'s keys added (e.g. {"policy": "senpai", "decision_t_ns": ...}).
ControllerEvent reclaim_end_event(const ReclaimRecord& r, std::int64_t page_size_bytes, const nlohmann::json& tag);

/// The reclaim_actions row of a finished write (bundle.hpp ReclaimRow), bytes.
ReclaimRow reclaim_row(const ReclaimRecord& r, std::int64_t page_size_bytes);

/// Each of `writes` as a reclaim_end event appended to `events` (its tag plus "write_seq")
/// and a row appended to `rows`.
void record_writes(const std::vector<ReclaimWriter::Finished>& writes, std::int64_t page_size_bytes,
                   const nlohmann::json& tag, std::vector<ControllerEvent>& events, std::vector<ReclaimRow>& rows);

}  // namespace harness::case_
