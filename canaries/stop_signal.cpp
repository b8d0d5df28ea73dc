#include "canaries/stop_signal.hpp"

#include <csignal>
#include <cerrno>
#include <system_error>

namespace canaries {
namespace {
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop(int sig) { g_stop_signal = sig; }
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: sleeps return EINTR
  for (int sig : {SIGTERM, SIGINT}) {
    if (sigaction(sig, &sa, nullptr) != 0) {
      throw std::system_error(errno, std::generic_category(), "sigaction");
    }
  }
}

bool stop_requested() { return g_stop_signal != 0; }
int stop_signal() { return g_stop_signal; }

}  // namespace canaries
