#pragma once
// The canary trace file: writer and reader. Format (version 1) in canaries/TRACE.md:
// a 64-byte little-endian header (magic "HKCTRACE", version, record size, canary name,
// period, schedule origin, record count, not-recorded count), `count` records of 64
// bytes, and an 8-byte FNV-1a-64 checksum of everything before it.
#include "canaries/trace_record.hpp"

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace canaries {

/// Any problem reading or writing a trace; what() names the file and the problem
/// (missing, truncated, bad magic, unsupported version, checksum mismatch, ...).
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Trace-wide fields (header of the file).
struct TraceHeader {
  std::string canary;              ///< "compute" or "sqlite" (1..15 chars [a-z0-9_-])
  std::int64_t period_ns = 0;      ///< schedule period, ns (> 0)
  std::int64_t origin_ns = 0;      ///< scheduled start of request 0, CLOCK_MONOTONIC ns
  std::uint64_t not_recorded = 0;  ///< requests that ran after the buffer was full
  bool operator==(const TraceHeader&) const = default;
};

/// A whole trace as read back.
struct TraceFile {
  TraceHeader header;
  std::vector<TraceRecord> records;
};

inline constexpr std::uint32_t kTraceVersion = 1;
inline constexpr std::size_t kTraceHeaderBytes = 64;
inline constexpr std::size_t kTraceRecordBytes = 64;
inline constexpr std::size_t kTraceTrailerBytes = 8;

/// Encodes a trace into the file format (bytes). Throws TraceError on a bad header
/// (canary name empty, too long or with other characters; period <= 0).
std::string encode_trace(const TraceHeader& header, std::span<const TraceRecord> records);

/// Decodes bytes of a trace; `source` names the origin in error messages.
/// Throws TraceError (truncated, trailing bytes, bad magic/version/record size,
/// checksum mismatch, records out of order).
TraceFile decode_trace(const std::string& bytes, const std::string& source);

/// Writes the trace to `path` atomically (path.tmp, fsync, rename). Throws TraceError.
void write_trace(const std::string& path, const TraceHeader& header,
                 std::span<const TraceRecord> records);

/// Reads and validates a trace file. Throws TraceError naming `path`.
TraceFile read_trace(const std::string& path);

/// One record in the file's byte layout (8 little-endian 64-bit fields); no allocation.
void encode_record(const TraceRecord& r, unsigned char out[kTraceRecordBytes]);

/// The journal a canary appends to while it runs (TRACE.md "Journal"): the 64-byte header
/// (count 0), then one 64-byte record per finished request. `journal_path(trace)` =
/// trace + ".partial"; the canary removes it once the final trace is written.
std::string journal_path(const std::string& trace_path);
/// The header bytes that open a journal. Throws TraceError on a bad header.
std::string encode_journal_header(const TraceHeader& header);

/// Reads a journal left by a canary that did not finish (killed): the header and every
/// whole record (a torn last record is ignored). Throws TraceError naming `path` when the
/// header is missing or invalid or records are out of order.
TraceFile read_journal(const std::string& path);

}  // namespace canaries
