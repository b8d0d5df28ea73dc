#pragma once
// Request bodies read with a hard byte limit, whatever the headers say.
//
// cpp-httplib (Debian 12: 0.11) checks its payload limit only against Content-Length: a
// chunked body, or one without a length, is read whole into memory. The agent therefore
// reads every body itself through a ContentReader and stops at the limit (the transport,
// guarded_server.hpp, bounds the raw bytes and the time of the same read).
#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace harness::agent {

/// Outcome of read_body_limited().
struct BodyRead {
  int status = 0;       ///< 0 = complete; 413 = over the limit; 408 = deadline passed; 400 = read error
  std::string message;  ///< for the error body ("" when complete)
};

/// Reads the whole body into `body`, stopping as soon as more than `max_bytes` bytes
/// (bytes actually received, not a header's claim) or more than `deadline` of wall time
/// (a slow-drip sender) have gone by. Never buffers more than `max_bytes` + one chunk.
BodyRead read_body_limited(const httplib::ContentReader& reader, std::size_t max_bytes,
                           std::chrono::steady_clock::duration deadline, std::string& body);

}  // namespace harness::agent
