// How `ddpscale sweep` stops on SIGINT or SIGTERM (Ctrl-C, scancel, pre-emption): at once,
// with exit code 130, abandoning the configuration under way; only while rank 0 writes a
// file (StoringGuard) is the exit put off until the file is complete. docs/reliability.md
// has the details.
#pragma once

namespace ddpscale {

// The signal's own name ("SIGINT", "SIGTERM"; "a signal" for one the sweep does not
// handle), and where such a signal comes from (" (Ctrl-C)"; "" where nothing is to say).
// Async-signal-safe: constant strings, so the handler can print them.
const char* stop_signal_name(int signal_number);
const char* stop_signal_origin(int signal_number);

// Installs the SIGINT/SIGTERM handlers; the leader (rank 0) prints the one line that says so.
void install_stop_handlers(bool leader);

// While alive, a stop signal waits; at its end, a signal that came meanwhile exits.
class StoringGuard {
 public:
  StoringGuard();
  ~StoringGuard();
  StoringGuard(const StoringGuard&) = delete;
  StoringGuard& operator=(const StoringGuard&) = delete;
};

}  // namespace ddpscale
