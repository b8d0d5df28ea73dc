// Repeated memory.reclaim writes, one in flight at a time (reclaim_writer.hpp).
#include "harness/case/control/reclaim_writer.hpp"

#include <stdexcept>

#include "harness/case/control/reclaim_action.hpp"

namespace harness::case_ {

namespace {
std::atomic<int> inline_scopes{0};
}  // namespace

ReclaimWriter::InlineScope::InlineScope() { ++inline_scopes; }
ReclaimWriter::InlineScope::~InlineScope() { --inline_scopes; }

ReclaimWriter::ReclaimWriter(harness::kernel::Cgroup bg, std::int64_t settle_ns) : bg_(std::move(bg)), settle_ns_(settle_ns) {}

bool ReclaimWriter::busy() const { return write_.running(); }

void ReclaimWriter::start(std::int64_t bytes, std::optional<PgstealRate> concurrent_rate) {
  if (busy()) throw std::logic_error("ReclaimWriter::start: a write is still in flight");
  if (bytes <= 0) throw std::logic_error("ReclaimWriter::start: a write asks for > 0 bytes");
  join_finished();
  ++started_;
  if (inline_scopes.load() > 0) {
    finished_.push_back({started_, ReclaimAction::run(bg_, bytes, settle_ns_, concurrent_rate)});
    return;
  }
  write_.start([this, seq = started_, bytes, concurrent_rate] {
    return Finished{seq, ReclaimAction::run(bg_, bytes, settle_ns_, concurrent_rate)};
  }, "ReclaimWriter::start");
}

void ReclaimWriter::join_finished() {
  if (auto f = write_.take()) finished_.push_back(std::move(*f));
}

std::vector<ReclaimWriter::Finished> ReclaimWriter::collect() {
  join_finished();
  std::vector<Finished> out;
  out.swap(finished_);
  return out;
}

std::vector<ReclaimWriter::Finished> ReclaimWriter::wait() {
  if (auto f = write_.join()) finished_.push_back(std::move(*f));
  return collect();
}

ControllerEvent reclaim_end_event(const ReclaimRecord& r, std::int64_t page_size_bytes, const nlohmann::json& tag) {
  nlohmann::json detail = r.to_json(page_size_bytes);
  if (tag.is_object()) detail.update(tag);
  return {r.end_ns, "reclaim_end", std::nullopt, std::nullopt, std::nullopt, std::nullopt, detail};
}

ReclaimRow reclaim_row(const ReclaimRecord& r, std::int64_t page_size_bytes) {
  ReclaimRow row;
  static_cast<ReclaimReadings&>(row) = r;
  row.achieved_bytes = r.achieved_bytes(page_size_bytes);
  row.achieved_counter = r.counter;
  row.concurrent_estimate_bytes = r.concurrent_estimate_bytes(page_size_bytes);
  row.achieved_conservative_bytes = r.achieved_conservative_bytes(page_size_bytes);
  row.achieved_settled_bytes = r.achieved_settled_bytes(page_size_bytes);
  if (r.write_cpu_ns) row.write_cpu_us = *r.write_cpu_ns / 1000;
  return row;
}

void record_writes(const std::vector<ReclaimWriter::Finished>& writes, std::int64_t page_size_bytes,
                   const nlohmann::json& tag, std::vector<ControllerEvent>& events, std::vector<ReclaimRow>& rows) {
  for (const auto& w : writes) {
    nlohmann::json t = tag.is_object() ? tag : nlohmann::json::object();
    t["write_seq"] = w.seq;
    events.push_back(reclaim_end_event(w.record, page_size_bytes, t));
    rows.push_back(reclaim_row(w.record, page_size_bytes));
  }
}

}  // namespace harness::case_
