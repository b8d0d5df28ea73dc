// write_synthetic_db OUT.db [--quick] [--scale K]: writes the benchmark's synthetic
// confirmatory campaign (analysis/simulate/synthetic.hpp): 5 VMs x 4 regimes x 3 triplets x 3
// configurations = 180 cases, phases 120/300/120 s (--quick: 12/30/12 s), 2 canaries at
// 100 ms = 1.94 million canary records. --scale K writes K times the triplets per stratum
// (K = 10: 1,800 cases, 19.4 million records, the "ten times the study" bench). Prints the
// record count. Used by run_analyze_bench.sh; not a test.
#include "analysis/simulate/synthetic.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

int main(int argc, char** argv) {
  const char* usage = "usage: write_synthetic_db OUT.db [--quick] [--scale K]\n";
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (argc < 2 || argv[1][0] == '-') {  // an option where the output file belongs
    std::fputs(usage, stderr);
    return 64;
  }
  bool quick = false;
  int scale = 1;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--scale") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
      scale = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "write_synthetic_db: unknown or bad argument '%s' (--quick, --scale K with K > 0)\n",
                   argv[i]);
      return 64;
    }
  }
  analysis::SyntheticOptions o = analysis::benchmark_campaign(quick);
  o.triplets_per_stratum *= scale;
  try {
    std::printf("%lld\n", static_cast<long long>(analysis::write_synthetic_campaign(argv[1], o)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_synthetic_db: %s\n", e.what());
    return 2;
  }
  return 0;
}
