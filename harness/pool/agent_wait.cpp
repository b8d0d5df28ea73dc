// Reaching a guest's agent (see agent_wait.hpp).
#include "harness/pool/agent_wait.hpp"

#include "harness/error/expected.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

namespace harness::pool {

agent::ClientOptions client_options(const Guest& g, agent::ClientOptions base) {
  base.tls_ca_file = g.tls_ca_file;
  base.tls_pin_sha256 = g.tls_pin_sha256;
  base.allow_plain_http = g.insecure_plain_http;
  return base;
}

std::vector<std::string> wait_for_agents(const std::vector<Guest>& guests, const HostWait& w, std::FILE* out,
                                         std::map<std::string, nlohmann::json>* answers) {
  agent::ClientOptions co;
  co.get_attempts = 1;  // the backoff is ours, below
  co.connect_timeout = std::chrono::milliseconds(std::min(5000, w.request_timeout_ms));
  co.request_timeout = std::chrono::milliseconds(w.request_timeout_ms);
  std::map<std::string, std::string> waiting;  // guest name -> last error
  auto check = [&](const Guest& g) -> Checked {
    try {
      auto h = agent::AgentClient(g.url, "", g.token_file, client_options(g, co)).health();  // needs no token
      if (!h.ok()) return problem(h.message());
      if (answers) (*answers)[g.name] = std::move(h).value();
      return {};
    } catch (const std::exception& e) {  // the guest's URL or TLS options refused (AgentClient's constructor)
      return problem(e.what());
    }
  };
  for (const auto& g : guests)
    if (auto answered = check(g); !answered) waiting[g.name] = answered.error().message;
  const auto t0 = std::chrono::steady_clock::now();
  long delay_ms = std::max(1, w.first_backoff_ms);
  auto waited_s = [&] {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0).count();
  };
  while (!waiting.empty()) {
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    if (elapsed + std::chrono::milliseconds(delay_ms) > std::chrono::seconds(w.total_s)) break;
    for (const auto& g : guests)
      if (waiting.count(g.name) && out)
        std::fprintf(out, "%s: agent at %s not answering (%s); asking again in %.1f s (waited %lld s of at most %d s)\n",
                     g.name.c_str(), g.url.c_str(), waiting[g.name].c_str(), delay_ms / 1000.0,
                     static_cast<long long>(waited_s()), w.total_s);
    if (out) std::fflush(out);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    delay_ms = std::min<long>(delay_ms * 2, std::max(w.first_backoff_ms, w.max_backoff_ms));
    for (const auto& g : guests) {
      if (!waiting.count(g.name)) continue;
      if (auto answered = check(g); !answered) {
        waiting[g.name] = answered.error().message;
      } else {
        waiting.erase(g.name);
        if (out) std::fprintf(out, "%s: agent at %s answers after %lld s\n", g.name.c_str(), g.url.c_str(),
                              static_cast<long long>(waited_s()));
      }
    }
  }
  std::vector<std::string> still;
  for (const auto& g : guests)
    if (waiting.count(g.name))
      still.push_back(g.name + " (" + g.url + "): agent not answering GET /v1/health after waiting " +
                      std::to_string(waited_s()) + " s (at most " + std::to_string(w.total_s) +
                      " s, exponential backoff): " + waiting[g.name]);
  return still;
}

}  // namespace harness::pool
