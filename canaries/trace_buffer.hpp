#pragma once
// In-memory trace of a canary run (DESIGN.md: traces are buffered in memory and written
// at exit, so the canary does no I/O mid-run). The buffer is allocated and pre-faulted
// once for the run length; it never reallocates. When full, further requests are
// counted (not_recorded) but not stored, and the summary says so.
#include "canaries/trace_record.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace canaries {

class TraceBuffer {
 public:
  /// Allocates and zero-fills (pre-faults) room for `capacity` records (64 bytes each
  /// in memory order of TraceRecord). Throws std::bad_alloc when memory is short.
  explicit TraceBuffer(std::size_t capacity);

  /// Stores `r` and returns true; when full, counts it in not_recorded() and returns false.
  bool push(const TraceRecord& r);

  /// The stored records, in push order.
  std::span<const TraceRecord> records() const { return {slots_.data(), size_}; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return slots_.size(); }
  /// Requests that ran after the buffer was full.
  std::uint64_t not_recorded() const { return not_recorded_; }

 private:
  std::vector<TraceRecord> slots_;
  std::size_t size_ = 0;
  std::uint64_t not_recorded_ = 0;
};

}  // namespace canaries
