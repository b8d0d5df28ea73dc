// Limited request-body reader (see body_reader.hpp).
#include "harness/agent/http/body_reader.hpp"

namespace harness::agent {

BodyRead read_body_limited(const httplib::ContentReader& reader, std::size_t max_bytes,
                           std::chrono::steady_clock::duration deadline, std::string& body) {
  BodyRead r;
  const auto t0 = std::chrono::steady_clock::now();
  body.clear();
  const bool ok = reader([&](const char* data, std::size_t n) {
    // The whole limit at once, once a body comes: one allocation, where growing by doubling
    // left the smaller buffers of four concurrent 1 MiB bodies behind in the threads' malloc
    // arenas (pages of it that are never written are never resident).
    if (body.capacity() < max_bytes) body.reserve(max_bytes);
    if (body.size() + n > max_bytes) {
      r.status = 413;
      r.message = "request body too large (limit " + std::to_string(max_bytes) + " bytes, counted as received)";
      return false;
    }
    if (std::chrono::steady_clock::now() - t0 > deadline) {
      r.status = 408;
      r.message = "request body not received within " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(deadline).count()) + " s";
      return false;
    }
    body.append(data, n);
    return true;
  });
  if (!ok && r.status == 0) {
    // (A read that the transport ended at its body deadline is told apart by the caller:
    // guarded_server.hpp body_deadline_passed.)
    r.status = 400;
    r.message = "request body could not be read (connection closed, malformed chunked encoding, or more "
                "framing than body)";
  }
  if (r.status != 0) body.clear();
  return r;
}

}  // namespace harness::agent
