#pragma once
// In-memory trace of a canary run. The buffer is allocated and pre-faulted once for the
// run length; it never reallocates. When full, further requests are counted
// (not_recorded) but not stored, and the summary says so. With a journal (journal_to),
// every stored record is also appended to it with one write(2) of 64 bytes (no
// allocation, no fsync), so a canary that is killed leaves every request it finished
// (docs/PROTOCOL.md: every case keeps its outcome; the journal format is in TRACE.md).
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
  /// With a journal, also appends the encoded record to it (a failed write is counted in
  /// journal_errors(), never thrown: the in-memory trace stays complete).
  bool push(const TraceRecord& r);

  /// Appends every later push() to `fd` (opened by the caller, O_APPEND; -1 = none).
  void journal_to(int fd) { journal_fd_ = fd; }
  /// Journal writes that failed or were short.
  std::uint64_t journal_errors() const { return journal_errors_; }

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
  int journal_fd_ = -1;
  std::uint64_t journal_errors_ = 0;
};

}  // namespace canaries
