#pragma once
/// Ctrl-C and SIGTERM for the long commands (`bristle run`, `bristle batch`).
///
/// The handler does one thing, async-signal-safe: it stores the signal's number in a
/// `volatile std::sig_atomic_t`. The work notices it between two steps and at each Newton
/// iteration of a step (RunOptions::stop in runner/run_simulation.hpp) or between two polls
/// of the workers (batch), stops cleanly and says so. The handler is installed with
/// SA_RESETHAND: a second Ctrl-C finds the default action again and ends the process at once
/// (the frames on disk are still whole, the manifest still says "running";
/// docs/output-format.md). SA_RESTART keeps a frame write that the signal lands in from
/// failing with EINTR.
///
/// A signal that the parent process ignores (a job started with `nohup`, or in the background
/// of a non-interactive shell, has SIGINT ignored) stays ignored.

#include <csignal>

namespace bristle::cli {

/// Installs the handler for SIGINT and SIGTERM (each unless ignored) and returns the flag it
/// sets: 0 until a signal arrives, then that signal's number.
const volatile std::sig_atomic_t* install_interrupt_handlers();

/// 128 + `signal`: the exit code of a command stopped by `signal`, as a shell reports a
/// process killed by it (130 for Ctrl-C, 143 for SIGTERM).
int interrupted_exit_code(int signal);

/// "SIGINT", "SIGTERM" (otherwise "a signal"), for messages.
const char* signal_name(int signal);

}  // namespace bristle::cli
