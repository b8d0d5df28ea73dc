#pragma once
// Page contents of pressure-gen: seeded and reproducible, generated as one
// stream of 4 KiB pages in allocation order (page 0 first).
//
// random: all 4096 bytes from boost::random::mt19937_64 seeded with `seed` (512 outputs
//   per page, little-endian): incompressible (ratio ~1.0 with lz4/zstd/lzo).
// structured: target about 3:1. Bytes [0, 1365) come from the same mt19937_64 stream
//   (171 outputs; the 3 leftover bytes of the last output are dropped), bytes
//   [1365, 4096) repeat the 16-byte pattern {page index (u64 LE), seed (u64 LE)}. A
//   compressor stores the random third (~1365 bytes) and a few bytes for the repeat:
//   4096 / ~1370 ~= 3.0 per page (zram compresses page by page). Not a zram
//   "same-filled" page (those are stored without compression).
// Measured ratios (zstd, lz4 CLIs on a 64 MiB sample): tests/bench/workloads/run_bench.sh.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace pressure {

inline constexpr std::size_t kPageBytes = 4096;
/// Random prefix of a structured page, bytes (one third of the page).
inline constexpr std::size_t kStructuredRandomBytes = 1365;

enum class Contents { Structured, Random };

/// "structured" | "random" -> Contents; throws std::invalid_argument naming --contents.
Contents parse_contents(const std::string& s);
/// Contents -> "structured" | "random".
const char* contents_name(Contents c);

/// Generates the page stream; the n-th call to fill() writes page n.
class PageGenerator {
 public:
  PageGenerator(Contents contents, std::uint64_t seed);
  ~PageGenerator();
  PageGenerator(const PageGenerator&) = delete;
  PageGenerator& operator=(const PageGenerator&) = delete;
  /// Writes the next page (kPageBytes bytes) to `page`; every byte is written.
  void fill(unsigned char* page);
  /// Pages generated so far.
  std::uint64_t pages() const { return page_; }

 private:
  struct Engine;
  std::unique_ptr<Engine> engine_;
  Contents contents_;
  std::uint64_t seed_;
  std::uint64_t page_ = 0;
};

}  // namespace pressure
