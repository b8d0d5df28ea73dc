#pragma once
// SIGTERM / SIGINT handling shared by the workloads: the handler only sets a flag; the
// main loop notices it (clock_nanosleep returns EINTR), finishes the request in
// progress, writes its outputs and exits 0 (harness/case executor contract).
namespace canaries {

/// Installs handlers for SIGTERM and SIGINT (sigaction without SA_RESTART).
/// Idempotent. Throws std::system_error when sigaction fails.
void install_stop_handlers();

/// True once SIGTERM or SIGINT arrived (async-signal-safe flag).
bool stop_requested();

/// The signal number that requested the stop, 0 when none.
int stop_signal();

}  // namespace canaries
