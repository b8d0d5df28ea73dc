#include "canaries/trace_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace canaries {
namespace {

constexpr char kMagic[8] = {'H', 'K', 'C', 'T', 'R', 'A', 'C', 'E'};
constexpr std::size_t kNameBytes = 16;

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint32_t get_u32(const std::string& s, std::size_t off) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(s[off + i])) << (8 * i);
  return v;
}
std::uint64_t get_u64(const std::string& s, std::size_t off) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[off + i])) << (8 * i);
  return v;
}
std::uint64_t fnv1a64(const char* p, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}
bool valid_name(const std::string& n) {
  if (n.empty() || n.size() >= kNameBytes) return false;
  for (char c : n) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string encode_trace(const TraceHeader& h, std::span<const TraceRecord> records) {
  if (!valid_name(h.canary)) {
    throw TraceError("trace header: canary name '" + h.canary + "' must be 1-15 characters of [a-z0-9_-]");
  }
  if (h.period_ns <= 0) throw TraceError("trace header: period_ns must be > 0");
  std::string out;
  out.reserve(kTraceHeaderBytes + records.size() * kTraceRecordBytes + kTraceTrailerBytes);
  out.append(kMagic, sizeof kMagic);
  put_u32(out, kTraceVersion);
  put_u32(out, static_cast<std::uint32_t>(kTraceRecordBytes));
  std::string name = h.canary;
  name.resize(kNameBytes, '\0');
  out += name;
  put_u64(out, static_cast<std::uint64_t>(h.period_ns));
  put_u64(out, static_cast<std::uint64_t>(h.origin_ns));
  put_u64(out, records.size());
  put_u64(out, h.not_recorded);
  for (const TraceRecord& r : records) {
    put_u64(out, r.seq);
    put_u64(out, static_cast<std::uint64_t>(r.scheduled_ns));
    put_u64(out, static_cast<std::uint64_t>(r.wake_ns));
    put_u64(out, static_cast<std::uint64_t>(r.completion_ns));
    put_u64(out, static_cast<std::uint64_t>(r.minflt));
    put_u64(out, static_cast<std::uint64_t>(r.majflt));
    put_u64(out, static_cast<std::uint64_t>(r.nvcsw));
    put_u64(out, static_cast<std::uint64_t>(r.nivcsw));
  }
  put_u64(out, fnv1a64(out.data(), out.size()));
  return out;
}

TraceFile decode_trace(const std::string& b, const std::string& source) {
  auto fail = [&](const std::string& what) { return TraceError("trace " + source + ": " + what); };
  if (b.size() < kTraceHeaderBytes + kTraceTrailerBytes) {
    throw fail("truncated: " + std::to_string(b.size()) + " bytes, shorter than header + checksum (" +
               std::to_string(kTraceHeaderBytes + kTraceTrailerBytes) + ")");
  }
  if (std::memcmp(b.data(), kMagic, sizeof kMagic) != 0) {
    throw fail("bad magic (not a canary trace file)");
  }
  const std::uint32_t version = get_u32(b, 8);
  if (version != kTraceVersion) {
    throw fail("unsupported version " + std::to_string(version) + " (reader knows " +
               std::to_string(kTraceVersion) + ")");
  }
  const std::uint32_t rec_bytes = get_u32(b, 12);
  if (rec_bytes != kTraceRecordBytes) {
    throw fail("record size " + std::to_string(rec_bytes) + ", expected " + std::to_string(kTraceRecordBytes));
  }
  TraceFile t;
  std::string name(b.data() + 16, kNameBytes);
  name.resize(std::strlen(name.c_str()));
  t.header.canary = name;
  t.header.period_ns = static_cast<std::int64_t>(get_u64(b, 32));
  t.header.origin_ns = static_cast<std::int64_t>(get_u64(b, 40));
  const std::uint64_t count = get_u64(b, 48);
  t.header.not_recorded = get_u64(b, 56);
  const std::uint64_t max_count = (b.size() - kTraceHeaderBytes - kTraceTrailerBytes) / kTraceRecordBytes;
  if (count > max_count) {
    throw fail("truncated: header says " + std::to_string(count) + " records, file holds at most " +
               std::to_string(max_count) + " (" + std::to_string(b.size()) + " bytes)");
  }
  const std::size_t expected = kTraceHeaderBytes + count * kTraceRecordBytes + kTraceTrailerBytes;
  if (b.size() != expected) {
    throw fail("size " + std::to_string(b.size()) + " bytes, expected " + std::to_string(expected) + " for " +
               std::to_string(count) + " records (trailing bytes or truncated)");
  }
  const std::uint64_t stored = get_u64(b, expected - kTraceTrailerBytes);
  const std::uint64_t computed = fnv1a64(b.data(), expected - kTraceTrailerBytes);
  if (stored != computed) throw fail("checksum mismatch (file corrupt)");
  if (!valid_name(t.header.canary)) throw fail("bad canary name in header");
  if (t.header.period_ns <= 0) throw fail("period_ns <= 0 in header");
  t.records.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t o = kTraceHeaderBytes + i * kTraceRecordBytes;
    TraceRecord r;
    r.seq = get_u64(b, o);
    r.scheduled_ns = static_cast<std::int64_t>(get_u64(b, o + 8));
    r.wake_ns = static_cast<std::int64_t>(get_u64(b, o + 16));
    r.completion_ns = static_cast<std::int64_t>(get_u64(b, o + 24));
    r.minflt = static_cast<std::int64_t>(get_u64(b, o + 32));
    r.majflt = static_cast<std::int64_t>(get_u64(b, o + 40));
    r.nvcsw = static_cast<std::int64_t>(get_u64(b, o + 48));
    r.nivcsw = static_cast<std::int64_t>(get_u64(b, o + 56));
    if (i > 0 && r.seq <= t.records.back().seq) {
      throw fail("record " + std::to_string(i) + ": seq " + std::to_string(r.seq) + " not increasing");
    }
    t.records.push_back(r);
  }
  return t;
}

void write_trace(const std::string& path, const TraceHeader& header, std::span<const TraceRecord> records) {
  const std::string bytes = encode_trace(header, records);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw TraceError("trace " + path + ": cannot create " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      throw TraceError("trace " + path + ": write failed: " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    throw TraceError("trace " + path + ": fsync/close failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw TraceError("trace " + path + ": rename from " + tmp + " failed: " + std::strerror(errno));
  }
}

TraceFile read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError("trace " + path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw TraceError("trace " + path + ": read error");
  return decode_trace(ss.str(), path);
}

void encode_record(const TraceRecord& r, unsigned char out[kTraceRecordBytes]) {
  const std::uint64_t f[8] = {r.seq,
                              static_cast<std::uint64_t>(r.scheduled_ns),
                              static_cast<std::uint64_t>(r.wake_ns),
                              static_cast<std::uint64_t>(r.completion_ns),
                              static_cast<std::uint64_t>(r.minflt),
                              static_cast<std::uint64_t>(r.majflt),
                              static_cast<std::uint64_t>(r.nvcsw),
                              static_cast<std::uint64_t>(r.nivcsw)};
  for (int k = 0; k < 8; ++k)
    for (int i = 0; i < 8; ++i) out[8 * k + i] = static_cast<unsigned char>((f[k] >> (8 * i)) & 0xff);
}

std::string journal_path(const std::string& trace_path) { return trace_path + ".partial"; }

std::string encode_journal_header(const TraceHeader& header) {
  return encode_trace(header, {}).substr(0, kTraceHeaderBytes);
}

TraceFile read_journal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError("trace journal " + path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string b = ss.str();
  if (b.size() < kTraceHeaderBytes)
    throw TraceError("trace journal " + path + ": truncated: " + std::to_string(b.size()) +
                     " bytes, shorter than the header (" + std::to_string(kTraceHeaderBytes) + ")");
  // Whole records only (a kill can tear the last write), then the same checks as a trace:
  // the journal becomes a complete trace image with its count and checksum filled in.
  const std::uint64_t n = (b.size() - kTraceHeaderBytes) / kTraceRecordBytes;
  b.resize(kTraceHeaderBytes + n * kTraceRecordBytes);
  std::string count;
  put_u64(count, n);
  b.replace(48, 8, count);
  put_u64(b, fnv1a64(b.data(), b.size()));
  return decode_trace(b, path + " (journal)");
}

}  // namespace canaries
