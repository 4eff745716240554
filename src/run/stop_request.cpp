#include "run/stop_request.hpp"

#include <pthread.h>

#include <csignal>
#include <initializer_list>

namespace gridsim {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
    if (g_signal != 0) {
        // Asked twice: stop waiting for the checkpoint and end now, as the signal would have.
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    g_signal = sig;
}

}  // namespace

void install_stop_handlers() {
    struct sigaction sa = {};
    sa.sa_handler = &on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // MPI and file calls in flight carry on; the loop polls the flag
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGTERM, SIGINT, SIGUSR1}) {
        sigaction(sig, &sa, nullptr);
        sigaddset(&set, sig);
    }
    // A launcher may start us with these blocked (the mask is inherited across exec): a blocked
    // signal would stay pending and the run would never stop.
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

int stop_signal() { return g_signal; }

const char* signal_name(int signal) {
    switch (signal) {
        case SIGTERM:
            return "SIGTERM";
        case SIGINT:
            return "SIGINT";
        case SIGUSR1:
            return "SIGUSR1";
        default:
            return "a signal";
    }
}

}  // namespace gridsim
