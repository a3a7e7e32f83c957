#include "study/stop_signals.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include "check.hpp"

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

// Async-signal-safe: write(2) and _exit only.
void exit_interrupted() {
  if (g_print_interruption.load()) {
    char text[200] = "\n[sweep] interrupted by signal ";
    size_t n = std::strlen(text);
    int signal_number = g_stop_signal.load();
    char digits[12];
    size_t d = 0;
    do {
      digits[d++] = static_cast<char>('0' + signal_number % 10);
      signal_number /= 10;
    } while (signal_number > 0 && d < sizeof(digits));
    while (d > 0) text[n++] = digits[--d];
    const char* rest = ": finished configurations are kept; run again with --resume to continue\n";
    const size_t rest_length = std::strlen(rest);
    std::memcpy(text + n, rest, rest_length);
    n += rest_length;
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

void install_stop_handlers(bool leader) {
  g_print_interruption.store(leader);
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM})
    if (sigaction(signal_number, &action, nullptr) != 0)
      fatal_error(std::string("sigaction(") + (signal_number == SIGINT ? "SIGINT" : "SIGTERM") + ")",
                  std::strerror(errno), __FILE__, __LINE__);
}

StoringGuard::StoringGuard() { g_storing.store(true); }

StoringGuard::~StoringGuard() {
  g_storing.store(false);
  if (g_stop_signal.load() != 0) exit_interrupted();
}

}  // namespace ddpscale
