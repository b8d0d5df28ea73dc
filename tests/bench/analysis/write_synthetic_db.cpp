// write_synthetic_db OUT.db [--quick]: writes the benchmark's synthetic confirmatory campaign
// (analysis/synthetic.hpp): 5 VMs x 4 regimes x 3 triplets x 3 configurations = 180 cases,
// phases 120/300/120 s (--quick: 12/30/12 s), 2 canaries at 100 ms = 1.94 million canary
// records. Prints the record count. Used by run_analyze_bench.sh; not a test.
#include "analysis/synthetic.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: write_synthetic_db OUT.db [--quick]\n");
    return 64;
  }
  const bool quick = argc > 2 && std::strcmp(argv[2], "--quick") == 0;
  const analysis::SyntheticOptions o = analysis::benchmark_campaign(quick);
  try {
    std::printf("%lld\n", static_cast<long long>(analysis::write_synthetic_campaign(argv[1], o)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_synthetic_db: %s\n", e.what());
    return 2;
  }
  return 0;
}
