#pragma once
// Internal text helpers of hk_kernel (not part of the public interface).
#include <string>
#include <string_view>
#include <vector>

namespace harness::kernel {

/// Lines without '\n' (a final newline does not add an empty line).
std::vector<std::string_view> split_lines(std::string_view text);
/// Words separated by spaces/tabs.
std::vector<std::string_view> split_ws(std::string_view line);
/// Without leading/trailing whitespace (incl. newline).
std::string_view trim(std::string_view s);
/// Cuts the next line (without its '\n') off the front of `text`; false when `text` is empty.
/// The allocation-free form of split_lines, for files read every tick.
bool next_line(std::string_view& text, std::string_view& line);
/// Cuts the next word (separated by spaces/tabs) off the front of `line`; false when none is
/// left. The allocation-free form of split_ws.
bool next_word(std::string_view& line, std::string_view& word);
/// Whether `escaped` with its octal escapes decoded (unescape_octal) equals `plain`, without
/// building the decoded string.
bool unescaped_equals(std::string_view escaped, std::string_view plain);
/// Decodes the octal escapes the kernel uses in /proc/mounts and /proc/swaps (\040 = ' ').
std::string unescape_octal(std::string_view s);

}  // namespace harness::kernel
