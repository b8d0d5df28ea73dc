#include "canaries/hot_region.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace canaries {
namespace {
constexpr std::size_t kBlockBytes = 4096;
constexpr std::size_t kWordsPerBlock = kBlockBytes / 8;
constexpr std::size_t kWordsPerLine = 8;
constexpr std::size_t kLinesPerBlock = kWordsPerBlock / kWordsPerLine;
}  // namespace

std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

HotRegion::HotRegion(std::size_t hot_bytes, std::uint64_t seed) : seed_(seed) {
  if (hot_bytes == 0) throw std::invalid_argument("hot region size must be > 0");
  blocks_ = (hot_bytes + kBlockBytes - 1) / kBlockBytes;
  void* p = ::mmap(nullptr, blocks_ * kBlockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap of the hot region");
  words_ = static_cast<std::uint64_t*>(p);
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < blocks_ * kWordsPerBlock; ++i) {
    state += 0x9e3779b97f4a7c15ULL;  // splitmix64 stream
    words_[i] = splitmix64_mix(state);
  }
}

HotRegion::~HotRegion() { ::munmap(words_, blocks_ * kBlockBytes); }

std::uint64_t HotRegion::request(std::uint64_t seq) {
  std::uint64_t acc = splitmix64_mix(seed_ ^ seq);
  for (std::size_t b = 0; b < blocks_; ++b) {
    const std::size_t line = (seq + b) % kLinesPerBlock;
    std::uint64_t* w = words_ + b * kWordsPerBlock + line * kWordsPerLine;
    for (std::size_t k = 0; k < kWordsPerLine; ++k) acc = splitmix64_mix(acc ^ w[k]);
    w[0] = acc;
  }
  return acc;
}

}  // namespace canaries
