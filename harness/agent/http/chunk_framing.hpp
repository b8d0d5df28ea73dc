#pragma once
// The framing of a chunked request body, checked byte by byte as it arrives (RFC 9112
// section 7.1), by the connection guard before the HTTP library sees a byte of it.
//
// cpp-httplib 0.11 reads a chunk size with strtoul, so "-2" became a size near 2^64 (the
// agent then waited for the body deadline), "0x2" and " 2" were sizes, a bare LF ended a
// line, a chunk's data not followed by CRLF ended the body (what followed was parsed as the
// next request), and trailer fields failed only after the fact. The guard decides instead,
// at the first byte that breaks the grammar:
//
//   chunked-body = *chunk last-chunk CRLF            (no trailer fields: refused)
//   chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//   chunk-size   = 1*16HEXDIG                         (at most 16 digits: 64 bits)
//   chunk-ext    = *( BWS ";" <visible ASCII, SP, HTAB> ), the chunk line at most
//                  kMaxChunkLineBytes
//
// and the sizes declared so far above the body limit are refused before their data comes
// (as a declared Content-Length is). Rules: RFC 9112; the limits are ours (API.md "Limits").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace harness::agent {

/// Longest chunk-size line, extensions included, without its CRLF (bytes; ours).
inline constexpr std::size_t kMaxChunkLineBytes = 256;

/// What ChunkFraming::feed found.
struct ChunkStep {
  enum class Outcome {
    More,       ///< every byte fed is body framing; the body goes on
    Done,       ///< the body ended (last chunk and its CRLF) after `used` bytes
    Malformed,  ///< the byte at `used` breaks the grammar: `why` (400)
    TooLarge,   ///< the chunk sizes declared so far exceed the body limit: `why` (413)
  };
  Outcome outcome = Outcome::More;
  std::size_t used = 0;  ///< bytes of the input that belong to the body (all of it for More)
  std::string why;       ///< the rule broken, for the answer; empty for More and Done
};

/// The state of one chunked body's framing.
class ChunkFraming {
 public:
  /// `max_body_bytes`: the decoded body limit the declared chunk sizes are held to.
  explicit ChunkFraming(std::size_t max_body_bytes) : max_body_(max_body_bytes) {}

  /// Checks the next bytes of the body. After Done, Malformed or TooLarge nothing more
  /// may be fed.
  ChunkStep feed(std::string_view in);

  bool done() const { return state_ == State::Done; }

 private:
  enum class State { SizeStart, Size, SizeSpace, Extension, SizeLf, Data, DataCr, DataLf, LastCr, LastLf, Done };

  /// One byte of a chunk line or of the CRLFs around data (every state but Data).
  ChunkStep byte(unsigned char c, std::size_t at);
  ChunkStep size_digit(unsigned char c, std::size_t at);
  ChunkStep line_end(std::size_t at);

  State state_ = State::SizeStart;
  std::size_t max_body_;
  std::uint64_t size_ = 0;       ///< the chunk size being read
  std::size_t digits_ = 0;       ///< its hex digits so far
  std::size_t line_bytes_ = 0;   ///< bytes of the chunk line so far
  std::uint64_t data_left_ = 0;  ///< data bytes of the current chunk still to come
  std::uint64_t declared_ = 0;   ///< sum of the chunk sizes declared so far
};

}  // namespace harness::agent
