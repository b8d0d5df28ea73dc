// Which action each configuration runs: a factory declaration and a case per
// configuration (the factories are defined in actions/<configuration>.cpp). The switch has
// no default, so a Configuration without a case here is a compiler warning (-Wswitch).
#include "harness/case/actions/action.hpp"

namespace harness::case_ {

std::unique_ptr<ConfigurationAction> static_zram_action();
std::unique_ptr<ConfigurationAction> delayed_activation_action();
std::unique_ptr<ConfigurationAction> bounded_reclaim_action();

std::unique_ptr<ConfigurationAction> make_action(Configuration conf) {
  switch (conf) {
    case Configuration::StaticZram: return static_zram_action();
    case Configuration::DelayedActivation: return delayed_activation_action();
    case Configuration::BoundedReclaim: return bounded_reclaim_action();
  }
  return nullptr;
}

}  // namespace harness::case_
