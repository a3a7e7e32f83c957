#include "trainer/study/stop_signals.hpp"

#include "comm/check.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

namespace ddpscale {
namespace {

// SIGINT/SIGTERM (Ctrl-C, scancel, pre-emption): the current configuration is abandoned and
// the process exits 130 at once. It has to be at once: mpirun answers its own SIGINT/SIGTERM
// by sending the ranks SIGTERM and, one second later (odls_base_sigkill_timeout), SIGKILL.
// Nothing of an unfinished configuration is on disk (rank 0 writes a configuration's file
// only when all its runs are done, under a temporary name), so leaving is clean; only while
// rank 0 writes a file is the exit put off until the file is complete (StoringGuard).
std::atomic<int> g_stop_signal{0};
std::atomic<bool> g_storing{false};
std::atomic<bool> g_print_interruption{false};  // rank 0 says it, once for the job

void append(char* text, size_t& n, size_t capacity, const char* part) {
  for (; *part && n + 1 < capacity; ++part) text[n++] = *part;
}

// Async-signal-safe: write(2) and _exit only.
void exit_interrupted() {
  if (g_print_interruption.load()) {
    char text[512];
    size_t n = 0;
    const int signal_number = g_stop_signal.load();
    append(text, n, sizeof text, "\n[sweep] interrupted by ");
    append(text, n, sizeof text, stop_signal_name(signal_number));
    append(text, n, sizeof text, stop_signal_origin(signal_number));
    append(text, n, sizeof text, ": finished configurations are kept; run again with --resume to continue\n");
    ssize_t ignored = write(STDERR_FILENO, text, n);
    (void)ignored;
  }
  _exit(130);
}

extern "C" void request_stop(int signal_number) {
  g_stop_signal.store(signal_number);
  if (!g_storing.load()) exit_interrupted();
}

}  // namespace

const char* stop_signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "a signal";
  }
}

const char* stop_signal_origin(int signal_number) {
  switch (signal_number) {
    case SIGINT: return " (Ctrl-C)";
    case SIGTERM:
      return " (kill, scancel or pre-emption; mpirun passes a Ctrl-C, SIGINT or SIGTERM it receives on to its ranks "
             "as SIGTERM)";
    default: return "";
  }
}

void install_stop_handlers(bool leader) {
  g_print_interruption.store(leader);
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM})
    if (sigaction(signal_number, &action, nullptr) != 0)
      fatal_error(std::string("sigaction(") + stop_signal_name(signal_number) + ")",
                  std::strerror(errno), __FILE__, __LINE__);
}

StoringGuard::StoringGuard() { g_storing.store(true); }

StoringGuard::~StoringGuard() {
  g_storing.store(false);
  if (g_stop_signal.load() != 0) exit_interrupted();
}

}  // namespace ddpscale
