// The chunked-body framing check (harness/agent/http/chunk_framing.hpp), fed the bytes a client
// sends: well-formed bodies end where their last CRLF is, whatever the pieces they arrive
// in; each malformed shape is refused at the byte that breaks RFC 9112 section 7.1.
#include "harness/agent/http/chunk_framing.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {
using harness::agent::ChunkFraming;
using harness::agent::ChunkStep;
using Outcome = ChunkStep::Outcome;

/// Feeds `body` in pieces of `piece` bytes; the first step that is not More (or the last).
ChunkStep feed_in_pieces(const std::string& body, std::size_t piece, std::size_t max_body = 1 << 20) {
  ChunkFraming f(max_body);
  ChunkStep last;
  std::size_t off = 0;
  for (; off < body.size(); off += piece) {
    last = f.feed(std::string_view(body).substr(off, piece));
    if (last.outcome != Outcome::More) {
      last.used += off;  // as an offset into the whole body
      return last;
    }
  }
  return last;
}

TEST(ChunkFraming, WellFormedBodiesEndAtTheirLastCrlfInAnyPieces) {
  const std::vector<std::string> bodies{
      "0\r\n\r\n",
      "2\r\n{}\r\n0\r\n\r\n",
      "A\r\n0123456789\r\n0\r\n\r\n",
      "a;name=value\r\n0123456789\r\n000\r\n\r\n",
      "2 ;x\r\nab\r\n0;last\r\n\r\n",
      "0000000000000002\r\nab\r\n0\r\n\r\n",
  };
  for (const auto& b : bodies)
    for (std::size_t piece : {std::size_t{1}, std::size_t{3}, b.size()}) {
      const ChunkStep s = feed_in_pieces(b + "GET / HTTP/1.1\r\n", piece);
      EXPECT_EQ(s.outcome, Outcome::Done) << b << " in pieces of " << piece << ": " << s.why;
      EXPECT_EQ(s.used, b.size()) << b << " in pieces of " << piece;
    }
}

TEST(ChunkFraming, MalformedFramingIsRefusedAtTheByteThatBreaksIt) {
  struct Bad {
    std::string body;
    std::size_t at;
    std::string why;
  };
  const std::vector<Bad> bad{
      {"-2\r\n", 0, "must begin with a hex digit, not '-'"},
      {" 2\r\nab\r\n", 0, "not a space"},
      {"0x2\r\nab\r\n", 1, "followed by 'x'"},
      {"2\nab\r\n", 1, "bare LF after a chunk size"},
      {"2\r\nab\n0\r\n\r\n", 5, "bare LF after chunk data"},
      {"2\r\nabXY\r\n", 5, "chunk data longer than its chunk size"},
      {"2 \r\nab\r\n", 2, "whitespace after a chunk size"},
      {"2\rab\r\n", 2, "CR not followed by LF"},
      {"0\r\nX-Trailer: 1\r\n\r\n", 3, "trailer fields"},
      {"0\r\n\n", 3, "bare LF after the last chunk"},
      {"11111111111111111\r\n", 16, "more than 16 hex digits"},
      {"1;a\x01\r\n", 3, "byte 0x01 in a chunk extension"},
      {"1;" + std::string(300, 'e') + "\r\n", 256, "longer than 256 bytes"},
  };
  for (const auto& b : bad)
    for (std::size_t piece : {std::size_t{1}, b.body.size()}) {
      const ChunkStep s = feed_in_pieces(b.body, piece);
      EXPECT_EQ(s.outcome, Outcome::Malformed) << b.body;
      EXPECT_EQ(s.used, b.at) << b.body;
      EXPECT_NE(s.why.find(b.why), std::string::npos) << b.body << ": " << s.why;
    }
}

// Chunk sizes that add up to more than the body limit are refused when the size line ends,
// before their data (a size of 2^64 - 2, "-2" as strtoul read it, among them).
TEST(ChunkFraming, DeclaredSizesAboveTheLimitAreRefusedBeforeTheirData) {
  ChunkStep s = feed_in_pieces("FFFFFFFFFFFFFFFE\r\n", 1, 1 << 20);
  EXPECT_EQ(s.outcome, Outcome::TooLarge) << s.why;
  EXPECT_EQ(s.used, 17u);
  EXPECT_NE(s.why.find("limit of 1048576 bytes"), std::string::npos) << s.why;
  s = feed_in_pieces("800\r\n" + std::string(0x800, 'x') + "\r\n801\r\n", 64, 4096);
  EXPECT_EQ(s.outcome, Outcome::TooLarge) << s.why;
  s = feed_in_pieces("800\r\n" + std::string(0x800, 'x') + "\r\n800\r\n" + std::string(0x800, 'x') + "\r\n0\r\n\r\n", 64,
                     4096);
  EXPECT_EQ(s.outcome, Outcome::Done) << "exactly the limit is accepted: " << s.why;
}

}  // namespace
