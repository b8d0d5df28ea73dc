// The framing of a chunked request body (see chunk_framing.hpp).
#include "harness/agent/http/chunk_framing.hpp"

#include <algorithm>
#include <cstdio>

namespace harness::agent {
namespace {

using Outcome = ChunkStep::Outcome;

int hex_value(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// A byte as a refusal shows it: 'c', a space, a tab, CR, LF or byte 0xNN (never the raw
/// byte: the answer may reach a terminal).
std::string shown_byte(unsigned char c) {
  if (c == ' ') return "a space";
  if (c == '\t') return "a tab";
  if (c == '\r') return "CR";
  if (c == '\n') return "LF";
  char b[16];
  if (c > 0x20 && c < 0x7f && c != '\\')
    std::snprintf(b, sizeof b, "'%c'", c);
  else
    std::snprintf(b, sizeof b, "byte 0x%02x", c);
  return b;
}

ChunkStep refuse(std::size_t at, std::string why) { return {Outcome::Malformed, at, std::move(why)}; }

const ChunkStep kMore{};

}  // namespace

ChunkStep ChunkFraming::feed(std::string_view in) {
  std::size_t i = 0;
  while (i < in.size()) {
    if (state_ == State::Done) return {Outcome::Done, i, ""};
    if (state_ == State::Data) {  // data bytes pass in bulk
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(data_left_, in.size() - i));
      i += n;
      data_left_ -= n;
      if (data_left_ == 0) state_ = State::DataCr;
      continue;
    }
    ChunkStep s = byte(static_cast<unsigned char>(in[i]), i);
    if (s.outcome != Outcome::More) return s;
    ++i;
  }
  return {state_ == State::Done ? Outcome::Done : Outcome::More, in.size(), ""};
}

ChunkStep ChunkFraming::byte(unsigned char c, std::size_t at) {
  const bool in_line = state_ == State::Size || state_ == State::SizeSpace || state_ == State::Extension;
  if (in_line && c != '\r' && ++line_bytes_ > kMaxChunkLineBytes)
    return refuse(at, "a chunk line longer than " + std::to_string(kMaxChunkLineBytes) + " bytes (limit)");
  switch (state_) {
    case State::SizeStart:
      if (hex_value(c) < 0)
        return refuse(at, "a chunk size must begin with a hex digit, not " + shown_byte(c) +
                              " (no sign, no leading whitespace)");
      size_ = 0;
      digits_ = 0;
      line_bytes_ = 1;
      state_ = State::Size;
      return size_digit(c, at);
    case State::Size:
      if (hex_value(c) >= 0) return size_digit(c, at);
      if (c == '\r') state_ = State::SizeLf;
      else if (c == ';') state_ = State::Extension;
      else if (c == ' ' || c == '\t') state_ = State::SizeSpace;
      else if (c == '\n') return refuse(at, "a bare LF after a chunk size (CRLF required)");
      else
        return refuse(at, "a chunk size followed by " + shown_byte(c) +
                              ": a chunk size is hex digits alone (no 0x prefix), then ';' and an extension, or CRLF");
      return kMore;
    case State::SizeSpace:
      if (c == ';') state_ = State::Extension;
      else if (c != ' ' && c != '\t')
        return refuse(at, "whitespace after a chunk size may only come before a ';' extension, not before " +
                              shown_byte(c));
      return kMore;
    case State::Extension:
      if (c == '\r') state_ = State::SizeLf;
      else if (c == '\n') return refuse(at, "a bare LF after a chunk extension (CRLF required)");
      else if ((c < 0x20 && c != '\t') || c >= 0x7f) return refuse(at, shown_byte(c) + " in a chunk extension");
      return kMore;
    case State::SizeLf:
      if (c != '\n') return refuse(at, "CR not followed by LF after a chunk size");
      return line_end(at);
    case State::DataCr:
      if (c == '\r') state_ = State::DataLf;
      else if (c == '\n') return refuse(at, "a bare LF after chunk data (CRLF required)");
      else return refuse(at, "chunk data longer than its chunk size (the data must be followed by CRLF)");
      return kMore;
    case State::DataLf:
      if (c != '\n') return refuse(at, "CR not followed by LF after chunk data");
      state_ = State::SizeStart;
      return kMore;
    case State::LastCr:
      if (c == '\r') state_ = State::LastLf;
      else if (c == '\n') return refuse(at, "a bare LF after the last chunk (CRLF required)");
      else return refuse(at, "trailer fields after the last chunk are not accepted");
      return kMore;
    case State::LastLf:
      if (c != '\n') return refuse(at, "CR not followed by LF after the last chunk");
      state_ = State::Done;
      return {Outcome::Done, at + 1, ""};
    case State::Data:
    case State::Done:
      break;  // feed() handles both before it looks at a byte
  }
  return kMore;
}

ChunkStep ChunkFraming::size_digit(unsigned char c, std::size_t at) {
  if (++digits_ > 16) return refuse(at, "a chunk size of more than 16 hex digits");
  size_ = size_ * 16 + static_cast<std::uint64_t>(hex_value(c));
  return kMore;
}

ChunkStep ChunkFraming::line_end(std::size_t at) {
  if (size_ == 0) {
    state_ = State::LastCr;
    return kMore;
  }
  if (size_ > max_body_ - declared_)
    return {Outcome::TooLarge, at,
            "request body too large (its chunk sizes add up to more than the limit of " + std::to_string(max_body_) +
                " bytes)"};
  declared_ += size_;
  data_left_ = size_;
  state_ = State::Data;
  return kMore;
}

}  // namespace harness::agent
