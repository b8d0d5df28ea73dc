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
/// Decodes the octal escapes the kernel uses in /proc/mounts and /proc/swaps (\040 = ' ').
std::string unescape_octal(std::string_view s);

}  // namespace harness::kernel
