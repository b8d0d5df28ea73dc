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

/// Refuses a config run_generator cannot run (std::invalid_argument saying the rule).
void check_config(const GeneratorConfig& cfg) {
  if (cfg.allocation_bytes / kPageBytes == 0) throw std::invalid_argument("allocation must be at least one 4 KiB page");
  if (cfg.active_set_bytes / kPageBytes > cfg.allocation_bytes / kPageBytes)
    throw std::invalid_argument("active set larger than the allocation");
  if (!(cfg.rate_bytes_per_s > 0)) throw std::invalid_argument("rate must be > 0");
  if (!(cfg.active_slide_bytes_per_s >= 0)) throw std::invalid_argument("active set slide must be >= 0");
}

/// One run of the generator: the mapping, the pages allocated so far, the active window and
/// the result's counters. run() is the loop: allocate a chunk when it is due, otherwise touch
/// the active set (or sleep until the next chunk when there is none yet).
class GeneratorRun {
 public:
  GeneratorRun(const GeneratorConfig& cfg, canaries::Clock& clock, const std::function<bool()>& stop)
      : cfg_(cfg),
        clock_(clock),
        stop_(stop),
        pages_total_(cfg.allocation_bytes / kPageBytes),
        active_target_(cfg.active_set_bytes / kPageBytes),
        chunk_pages_(std::max<std::uint64_t>(1, cfg.chunk_bytes / kPageBytes)),
        map_(pages_total_ * kPageBytes),
        gen_(cfg.contents, cfg.seed),
        t0_(clock.now_ns()),
        end_(cfg.duration_ns ? t0_ + *cfg.duration_ns : std::numeric_limits<std::int64_t>::max()) {}

  /// Runs until the duration ends or `stop` says so; the result.
  GeneratorResult run() {
    while (true) {
      if (stop_()) {
        r_.stopped = true;
        break;
      }
      const std::int64_t now = clock_.now_ns();
      if (now >= end_) break;
      std::int64_t next_event = end_;
      if (allocated_ < pages_total_) {
        const std::uint64_t n = std::min(chunk_pages_, pages_total_ - allocated_);
        const std::int64_t start = chunk_start_ns(t0_, (allocated_ + n) * kPageBytes, cfg_.rate_bytes_per_s);
        if (now >= start) {
          allocate_chunk(now, start, n);
          continue;
        }
        next_event = std::min(start, end_);
      }
      const std::uint64_t active = std::min(allocated_, active_target_);
      if (active == 0) {
        clock_.sleep_until_ns(next_event);  // false on EINTR: the loop re-checks stop
        continue;
      }
      win_ = window_start(now);
      touch(active, kPollPages);
    }
    return finish();
  }

 private:
  /// Start page of the active window at `t` (before the modulo): slide x elapsed / page.
  std::uint64_t window_start(std::int64_t t) const {
    if (cfg_.active_slide_bytes_per_s <= 0 || t <= t0_) return 0;
    return static_cast<std::uint64_t>(cfg_.active_slide_bytes_per_s * (static_cast<double>(t - t0_) / 1e9) /
                                      static_cast<double>(kPageBytes));
  }

  /// Touches `count` pages of the active window (`active` pages from win_, wrapping modulo
  /// the allocated pages), continuing where the previous call stopped; a wrap of the cursor
  /// completes a pass.
  void touch(std::uint64_t active, std::uint64_t count) {
    if (active == 0) return;
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t page = (win_ + cursor_) % allocated_;
      volatile std::uint64_t* w = reinterpret_cast<volatile std::uint64_t*>(map_.base + page * kPageBytes);
      *w = *w + 1;
      ++r_.touched_pages;
      if (++cursor_ >= active) {
        cursor_ = 0;
        ++r_.touch_passes;
      }
    }
  }

  /// Writes the `n` pages of the chunk due at `start` (looked at `now`; a stop is polled every
  /// kPollPages pages), then touches as many active pages.
  void allocate_chunk(std::int64_t now, std::int64_t start, std::uint64_t n) {
    r_.max_chunk_lag_ns = std::max(r_.max_chunk_lag_ns, now - start);
    ++r_.chunks;
    populate(map_.base + allocated_ * kPageBytes, n * kPageBytes);
    for (std::uint64_t i = 0; i < n; ++i) {
      if (i % kPollPages == kPollPages - 1 && stop_()) break;
      gen_.fill(map_.base + allocated_ * kPageBytes);
      ++allocated_;
    }
    if (allocated_ == pages_total_) {
      r_.allocation_complete = true;
      r_.allocation_elapsed_ns = clock_.now_ns() - t0_;
    }
    // Behind schedule the next chunk is due at once: touch as many active pages as
    // the chunk had before it, so the active set stays hot even then.
    win_ = window_start(now);
    touch(std::min(allocated_, active_target_), n);
  }

  /// The result at the end of the run: bytes written, the window's start, the times.
  GeneratorResult finish() {
    const std::int64_t now = clock_.now_ns();
    r_.allocated_bytes = allocated_ * kPageBytes;
    r_.window_start_page = allocated_ ? window_start(now) % allocated_ : 0;
    if (!r_.allocation_complete) r_.allocation_elapsed_ns = now - t0_;
    r_.elapsed_ns = now - t0_;
    return r_;
  }

  const GeneratorConfig& cfg_;
  canaries::Clock& clock_;
  const std::function<bool()>& stop_;
  const std::uint64_t pages_total_, active_target_, chunk_pages_;
  Mapping map_;
  PageGenerator gen_;
  const std::int64_t t0_, end_;
  GeneratorResult r_;
  std::uint64_t allocated_ = 0, cursor_ = 0;
  std::uint64_t win_ = 0;  ///< window start (page index, not wrapped) for the current touch call
};
}  // namespace

GeneratorResult run_generator(const GeneratorConfig& cfg, canaries::Clock& clock, const std::function<bool()>& stop) {
  check_config(cfg);
  return GeneratorRun(cfg, clock, stop).run();
}

}  // namespace pressure
