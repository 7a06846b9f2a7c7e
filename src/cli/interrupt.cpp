#include "bristle/cli/interrupt.hpp"

#include <signal.h>

namespace bristle::cli {

namespace {

volatile std::sig_atomic_t g_interrupt = 0;

extern "C" void on_interrupt(int signal) { g_interrupt = signal; }

void install(int signal) {
  struct sigaction current {};
  if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler == SIG_IGN) return;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(signal, &action, nullptr);
}

}  // namespace

const volatile std::sig_atomic_t* install_interrupt_handlers() {
  install(SIGINT);
  install(SIGTERM);
  return &g_interrupt;
}

int interrupted_exit_code(int signal) { return 128 + signal; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

}  // namespace bristle::cli
