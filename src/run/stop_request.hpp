// Requests to end a run early with a checkpoint (docs/running.md, "Batch jobs"): a signal (SIGTERM,
// SIGINT, SIGUSR1 as Slurm sends them), a STOP file in the output directory, or the deck's wall
// time. The signal handler only sets a flag; the time loop's StopMonitor (step_loop.hpp) makes
// every rank agree on it at the same step.
#pragma once

namespace gridsim {

// Installs the handlers: the first of these signals sets the flag, a second one ends the
// process at once (the default action). Call after MPI_Init, which may install its own.
void install_stop_handlers();

// The first signal received (0: none). Async-signal-safe to set, read anywhere.
int stop_signal();

// "SIGTERM", "SIGINT", "SIGUSR1" or "signal N".
const char* signal_name(int signal);

}  // namespace gridsim
