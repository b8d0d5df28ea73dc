// Trace file format (canaries/TRACE.md): round trip, and clear errors on bad files.
#include "canaries/trace_file.hpp"
#include "tests/common/slurp.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

namespace fs = std::filesystem;
using test_support::slurp;
using canaries::TraceError;
using canaries::TraceHeader;
using canaries::TraceRecord;

namespace {

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("hk-trace-test-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::vector<TraceRecord> sample_records() {
  std::vector<TraceRecord> v;
  for (std::uint64_t k = 0; k < 7; ++k) {
    const std::int64_t s = 1'000'000'000'000LL + static_cast<std::int64_t>(k) * 100'000'000;
    v.push_back({k, s, s + 1234 + static_cast<std::int64_t>(k), s + 987'654 * static_cast<std::int64_t>(k + 1),
                 static_cast<std::int64_t>(k * 3), static_cast<std::int64_t>(k % 2), 1, 2});
  }
  v[6].completion_ns = 0;  // never completed
  v[5].minflt = std::numeric_limits<std::int64_t>::max();
  return v;
}

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST(TraceFile, RoundTripThroughFile) {
  const fs::path p = temp_dir() / "rt.trace";
  const TraceHeader h{"sqlite", 100'000'000, 1'000'000'000'000LL, 3};
  const auto recs = sample_records();
  canaries::write_trace(p, h, recs);
  EXPECT_FALSE(fs::exists(p.string() + ".tmp"));
  EXPECT_EQ(fs::file_size(p), 64u + 64u * recs.size() + 8u);
  const auto t = canaries::read_trace(p);
  EXPECT_EQ(t.header, h);
  EXPECT_EQ(t.records, recs);
  // Little-endian layout: magic, then version 1 at offset 8, count at offset 48.
  const std::string b = slurp(p);
  EXPECT_EQ(b.substr(0, 8), "HKCTRACE");
  EXPECT_EQ(static_cast<unsigned char>(b[8]), 1);
  EXPECT_EQ(static_cast<unsigned char>(b[48]), recs.size());
  fs::remove_all(p.parent_path());
}

TEST(TraceFile, EmptyTraceRoundTrips) {
  const fs::path p = temp_dir() / "empty.trace";
  canaries::write_trace(p, {"compute", 100'000'000, 5, 0}, {});
  const auto t = canaries::read_trace(p);
  EXPECT_EQ(t.header.canary, "compute");
  EXPECT_TRUE(t.records.empty());
  fs::remove_all(p.parent_path());
}

TEST(TraceFile, TruncatedFileIsAnError) {
  const TraceHeader h{"compute", 100'000'000, 0, 0};
  const std::string full = canaries::encode_trace(h, sample_records());
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, std::size_t{64}, std::size_t{100}, full.size() - 1}) {
    const std::string msg = error_of([&] { canaries::decode_trace(full.substr(0, cut), "t.trace"); });
    EXPECT_NE(msg.find("t.trace"), std::string::npos) << msg;
    EXPECT_TRUE(msg.find("truncated") != std::string::npos || msg.find("checksum") != std::string::npos ||
                msg.find("size") != std::string::npos)
        << "cut at " << cut << ": " << msg;
  }
  EXPECT_NE(error_of([&] { canaries::decode_trace(full.substr(0, 200), "t"); }).find("truncated"), std::string::npos);
}

TEST(TraceFile, CorruptFileIsAnError) {
  const std::string full = canaries::encode_trace({"compute", 100'000'000, 0, 0}, sample_records());
  std::string flipped = full;
  flipped[64 + 20] ^= 0x01;  // one bit in record 0's wake_ns
  EXPECT_NE(error_of([&] { canaries::decode_trace(flipped, "t"); }).find("checksum"), std::string::npos);
  std::string magic = full;
  magic[0] = 'X';
  EXPECT_NE(error_of([&] { canaries::decode_trace(magic, "t"); }).find("magic"), std::string::npos);
  std::string version = full;
  version[8] = 9;
  EXPECT_NE(error_of([&] { canaries::decode_trace(version, "t"); }).find("version 9"), std::string::npos);
  EXPECT_NE(error_of([&] { canaries::decode_trace(full + "xx", "t"); }).find("trailing"), std::string::npos);
}

TEST(TraceFile, MissingFileNamesThePath) {
  const std::string msg = error_of([] { canaries::read_trace("/nonexistent/dir/x.trace"); });
  EXPECT_NE(msg.find("/nonexistent/dir/x.trace"), std::string::npos) << msg;
}

TEST(TraceFile, BadHeaderIsRejectedOnWrite) {
  EXPECT_THROW(canaries::encode_trace({"", 1, 0, 0}, {}), TraceError);
  EXPECT_THROW(canaries::encode_trace({"Compute!", 1, 0, 0}, {}), TraceError);
  EXPECT_THROW(canaries::encode_trace({"a-name-that-is-too-long", 1, 0, 0}, {}), TraceError);
  EXPECT_THROW(canaries::encode_trace({"compute", 0, 0, 0}, {}), TraceError);
  EXPECT_THROW(canaries::write_trace("/nonexistent/dir/x.trace", {"compute", 1, 0, 0}, {}), TraceError);
}

// The journal (TRACE.md "Journal"): header + appended records; a torn last record is
// dropped; the records read back are exactly those appended.
TEST(TraceJournal, AppendedRecordsReadBackAndATornTailIsDropped) {
  const fs::path p = temp_dir() / "j.trace.partial";
  const TraceHeader h{"compute", 100'000'000, 1'000'000'000'000LL, 0};
  const auto recs = sample_records();
  {
    std::ofstream o(p, std::ios::binary);
    o << canaries::encode_journal_header(h);
    for (const auto& r : recs) {
      unsigned char b[canaries::kTraceRecordBytes];
      canaries::encode_record(r, b);
      o.write(reinterpret_cast<const char*>(b), sizeof b);
    }
    o.write("torn-record", 11);  // a kill in the middle of the next write
  }
  const auto t = canaries::read_journal(p.string());
  EXPECT_EQ(t.header, h);
  EXPECT_EQ(t.records, recs);
  // The record encoding is the trace's: a journal of all records decodes like the trace.
  const std::string full = canaries::encode_trace(h, recs);
  EXPECT_EQ(slurp(p).substr(64, 64 * recs.size()), full.substr(64, 64 * recs.size()));
  EXPECT_EQ(canaries::journal_path("/x/c.trace"), "/x/c.trace.partial");
}

TEST(TraceJournal, MissingHeaderIsAnErrorNamingTheFile) {
  const fs::path p = temp_dir() / "short.partial";
  { std::ofstream(p, std::ios::binary) << "HKCTRACE"; }
  EXPECT_EQ(error_of([&] { canaries::read_journal(p.string()); }),
            "trace journal " + p.string() + ": truncated: 8 bytes, shorter than the header (64)");
}
