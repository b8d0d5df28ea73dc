#include "pressure/page_contents.hpp"

#include <boost/random/mersenne_twister.hpp>

#include <cstring>
#include <stdexcept>

namespace pressure {

struct PageGenerator::Engine {
  boost::random::mt19937_64 eng;
};

Contents parse_contents(const std::string& s) {
  if (s == "structured") return Contents::Structured;
  if (s == "random") return Contents::Random;
  throw std::invalid_argument("--contents '" + s + "' must be structured or random");
}

const char* contents_name(Contents c) { return c == Contents::Structured ? "structured" : "random"; }

PageGenerator::PageGenerator(Contents contents, std::uint64_t seed)
    : engine_(new Engine{boost::random::mt19937_64(seed)}), contents_(contents), seed_(seed) {}

PageGenerator::~PageGenerator() = default;

namespace {
inline void put_le(unsigned char* p, std::uint64_t w, std::size_t n) {
  for (std::size_t b = 0; b < n; ++b) p[b] = static_cast<unsigned char>(w >> (8 * b));
}
}  // namespace

void PageGenerator::fill(unsigned char* page) {
  auto& eng = engine_->eng;
  if (contents_ == Contents::Random) {
    for (std::size_t i = 0; i < kPageBytes; i += 8) put_le(page + i, eng(), 8);
  } else {
    for (std::size_t i = 0; i < kStructuredRandomBytes; i += 8) {
      const std::size_t n = std::min<std::size_t>(8, kStructuredRandomBytes - i);
      put_le(page + i, eng(), n);
    }
    unsigned char pattern[16];
    put_le(pattern, page_, 8);
    put_le(pattern + 8, seed_, 8);
    for (std::size_t i = kStructuredRandomBytes; i < kPageBytes; ++i) {
      page[i] = pattern[(i - kStructuredRandomBytes) % 16];
    }
  }
  ++page_;
}

}  // namespace pressure
