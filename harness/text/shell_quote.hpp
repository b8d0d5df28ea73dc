#pragma once
// Arguments as a POSIX shell reads them back: the command line a DB records, and every command
// the harness prints for the user to copy (fix commands of qualification, `harness status DB`).
#include <string>

namespace harness::text {

/// `arg` as one sh word: unchanged when every byte is in [A-Za-z0-9_./=:,+@%-] and it is not
/// empty, else single-quoted with each ' written as '\'' (POSIX sh quoting; "" becomes '').
std::string shell_quote(const std::string& arg);

/// argv[0..argc) each shell_quote()d, joined with single spaces.
std::string shell_join(int argc, const char* const* argv);

}  // namespace harness::text
