// Blocks SIGINT and SIGTERM before any library's initialiser runs, so a signal that arrives while
// the process is still starting waits for the run's signal thread (exit 130/143 after an orderly
// stop) instead of ending the process by the default action. `.preinit_array` entries of an
// executable run before every constructor, as soon as the dynamic loader has mapped the libraries
// (about 15 ms: the `rivulet` launcher blocks them before that, and this keeps the engine safe when
// it is started some other way).
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>

#include "CEarlySignals.h"

static void rivulet_block_stop_signals(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    // Started by the `rivulet` launcher, the process would be listed as `rivulet-engine` (its
    // file's name); every thread made later inherits this name.
    prctl(PR_SET_NAME, "rivulet", 0, 0, 0);
}

__attribute__((section(".preinit_array"), used)) static void (*const rivulet_preinit)(int, char **, char **) =
    rivulet_block_stop_signals;

int rivulet_early_signals_installed(void) { return 1; }
