#pragma once
// The pressure generator's run (docs/DESIGN.md "The case": an allocation larger than
// the bg limit while re-touching an active set).
//
// Memory: one private anonymous mapping (mmap, MAP_NORESERVE) of the whole allocation;
// each chunk is first faulted in with one madvise(MADV_POPULATE_WRITE) (batched faults;
// ignored when the kernel lacks it), then PageGenerator writes every byte of every page,
// so all pages are real, dirty anonymous pages. "allocated" counts written pages.
// Allocation: in chunks paced by pacing.hpp (absolute schedule from t0; overdue chunks
// start at once). After each chunk the loop touches as many active-set pages as the chunk
// had (so touching continues when the allocation is behind schedule and chunks are due
// back to back); between chunk starts, and after the allocation completes, it touches
// the active set continuously.
// Active set: a window of min(allocated, active_set) bytes. With slide 0 (default) it is
// the first bytes of the mapping, i.e. the oldest pages (allocated first). With a slide of
// S bytes/s the window starts at page floor(S x (now - t0) / 4 KiB) and wraps modulo the
// allocated pages: it moves through the allocation at S, so the pages it reaches are the
// ones that have gone longest untouched (under a bg limit smaller than the allocation:
// reclaimed, so they refault) and the pages it leaves become cold and are reclaimed.
// Ideal LRU with allocation > limit: about S/4 KiB refaults and swap-outs per second, all
// phase long. Measured (campaigns/README.md "Calibration"): the kernel LRU also evicts
// part of the hot window, so the churn is a multiple of S and grows faster than linearly.
// A touch is a write (+1) to the first 8-byte word of a page;
// a touch pass visits every active page in address order once. Under a bg limit smaller
// than the allocation, the rest of the allocation is cold and is what reclaim should
// take; touching keeps the active set hot, so its pages that were reclaimed anyway refault.
// The loop polls the clock and `stop` every 64 pages, so chunk starts are late by at most
// 64 page touches (plus the time a fault takes under pressure).
#include "canaries/clock.hpp"
#include "pressure/page_contents.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace pressure {

struct GeneratorConfig {
  std::uint64_t allocation_bytes = 0;  ///< rounded down to whole 4 KiB pages; > 0
  std::uint64_t active_set_bytes = 0;  ///< <= allocation_bytes
  std::uint64_t chunk_bytes = 1 << 20; ///< > 0
  double rate_bytes_per_s = 0;         ///< > 0
  double active_slide_bytes_per_s = 0; ///< >= 0; speed of the active window (0 = fixed at the start)
  Contents contents = Contents::Structured;
  std::uint64_t seed = 0;
  std::optional<std::int64_t> duration_ns;  ///< run length; none = until stop
};

struct GeneratorResult {
  std::uint64_t allocated_bytes = 0;      ///< pages written so far x 4 KiB
  bool allocation_complete = false;
  std::int64_t allocation_elapsed_ns = 0; ///< t0 to the end of the last chunk (or to the stop, if incomplete)
  std::int64_t elapsed_ns = 0;            ///< t0 to the end of the run
  std::uint64_t chunks = 0;               ///< chunks started
  std::int64_t max_chunk_lag_ns = 0;      ///< worst (actual start - scheduled start) of a chunk
  std::uint64_t touch_passes = 0;         ///< complete passes over the active set
  std::uint64_t touched_pages = 0;        ///< page touches in total
  std::uint64_t window_start_page = 0;    ///< active window start at the end (page index; 0 without slide)
  bool stopped = false;                   ///< `stop` returned true (SIGTERM/SIGINT)
};

/// Runs until the duration ends or `stop` returns true (a chunk in progress stops within
/// 64 pages). Throws std::invalid_argument on a bad config, std::system_error when mmap
/// fails. The mapping is unmapped before returning.
GeneratorResult run_generator(const GeneratorConfig& cfg, canaries::Clock& clock, const std::function<bool()>& stop);

}  // namespace pressure
