#include "pressure/generator.hpp"

#include "pressure/pacing.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <stdexcept>
#include <system_error>

namespace pressure {
namespace {
constexpr std::uint64_t kPollPages = 64;

struct Mapping {
  unsigned char* base = nullptr;
  std::size_t bytes = 0;
  explicit Mapping(std::size_t n) : bytes(n) {
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap of the allocation");
    base = static_cast<unsigned char*>(p);
  }
  ~Mapping() { ::munmap(base, bytes); }
};

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/// Faults a chunk in with one madvise(MADV_POPULATE_WRITE) (Linux >= 5.14) instead of one
/// page fault per page; the pages are then written by PageGenerator as before. Errors
/// (older kernel: EINVAL; ENOMEM/EFAULT under the cgroup limit) are ignored: the writes
/// then fault the pages in one by one, as without populate.
void populate(unsigned char* p, std::size_t n) { (void)::madvise(p, n, MADV_POPULATE_WRITE); }
}  // namespace

GeneratorResult run_generator(const GeneratorConfig& cfg, canaries::Clock& clock, const std::function<bool()>& stop) {
  const std::uint64_t pages_total = cfg.allocation_bytes / kPageBytes;
  const std::uint64_t active_target = cfg.active_set_bytes / kPageBytes;
  const std::uint64_t chunk_pages = std::max<std::uint64_t>(1, cfg.chunk_bytes / kPageBytes);
  if (pages_total == 0) throw std::invalid_argument("allocation must be at least one 4 KiB page");
  if (active_target > pages_total) throw std::invalid_argument("active set larger than the allocation");
  if (!(cfg.rate_bytes_per_s > 0)) throw std::invalid_argument("rate must be > 0");
  if (!(cfg.active_slide_bytes_per_s >= 0)) throw std::invalid_argument("active set slide must be >= 0");

  Mapping map(pages_total * kPageBytes);
  PageGenerator gen(cfg.contents, cfg.seed);
  GeneratorResult r;
  const std::int64_t t0 = clock.now_ns();
  const std::int64_t end =
      cfg.duration_ns ? t0 + *cfg.duration_ns : std::numeric_limits<std::int64_t>::max();
  std::uint64_t allocated = 0, cursor = 0;
  // Start page of the active window at `t` (before the modulo): slide x elapsed / page.
  auto window_start = [&](std::int64_t t) -> std::uint64_t {
    if (cfg.active_slide_bytes_per_s <= 0 || t <= t0) return 0;
    return static_cast<std::uint64_t>(cfg.active_slide_bytes_per_s * (static_cast<double>(t - t0) / 1e9) /
                                      static_cast<double>(kPageBytes));
  };
  std::uint64_t win = 0;  // window start (page index, not wrapped) for the current touch call
  // Touches `count` pages of the active window (`active` pages from `win`, wrapping
  // modulo the allocated pages), continuing where the previous call stopped; a wrap of
  // the cursor completes a pass.
  auto touch = [&](std::uint64_t active, std::uint64_t count) {
    if (active == 0) return;
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t page = (win + cursor) % allocated;
      volatile std::uint64_t* w = reinterpret_cast<volatile std::uint64_t*>(map.base + page * kPageBytes);
      *w = *w + 1;
      ++r.touched_pages;
      if (++cursor >= active) {
        cursor = 0;
        ++r.touch_passes;
      }
    }
  };
  std::int64_t now = t0;
  while (true) {
    if (stop()) {
      r.stopped = true;
      break;
    }
    now = clock.now_ns();
    if (now >= end) break;
    std::int64_t next_event = end;
    if (allocated < pages_total) {
      const std::uint64_t n = std::min(chunk_pages, pages_total - allocated);
      const std::int64_t start = chunk_start_ns(t0, (allocated + n) * kPageBytes, cfg.rate_bytes_per_s);
      if (now >= start) {
        r.max_chunk_lag_ns = std::max(r.max_chunk_lag_ns, now - start);
        ++r.chunks;
        populate(map.base + allocated * kPageBytes, n * kPageBytes);
        for (std::uint64_t i = 0; i < n; ++i) {
          if (i % kPollPages == kPollPages - 1 && stop()) break;
          gen.fill(map.base + allocated * kPageBytes);
          ++allocated;
        }
        if (allocated == pages_total) {
          r.allocation_complete = true;
          r.allocation_elapsed_ns = clock.now_ns() - t0;
        }
        // Behind schedule the next chunk is due at once: touch as many active pages as
        // the chunk had before it, so the active set stays hot even then.
        win = window_start(now);
        touch(std::min(allocated, active_target), n);
        continue;
      }
      next_event = std::min(start, end);
    }
    const std::uint64_t active = std::min(allocated, active_target);
    if (active == 0) {
      clock.sleep_until_ns(next_event);  // false on EINTR: the loop re-checks stop
      continue;
    }
    win = window_start(now);
    touch(active, kPollPages);
  }
  now = clock.now_ns();
  r.allocated_bytes = allocated * kPageBytes;
  r.window_start_page = allocated ? window_start(now) % allocated : 0;
  if (!r.allocation_complete) r.allocation_elapsed_ns = now - t0;
  r.elapsed_ns = now - t0;
  return r;
}

}  // namespace pressure
