// Blocks SIGINT and SIGTERM before any library's initialiser runs, so a signal that arrives while
// the process is still starting waits for the run's signal thread (exit 130/143 after an orderly
// stop) instead of ending the process by the default action. `.preinit_array` entries of an
// executable run before every constructor, as soon as the dynamic loader has mapped the libraries
// (about 15 ms: the `rivulet` launcher blocks them before that, and this keeps the engine safe when
// it is started some other way). It also puts back the environment the launcher changed for the
// engine's allocator.
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>

#include "CEarlySignals.h"

// Puts GLIBC_TUNABLES back as the user had it when the `rivulet` launcher raised glibc's per-thread
// cache for this process (see Sources/rivulet/main.c): glibc read it as the process started, and
// what the engine starts (`exec`, plugins, a browser) gets the user's environment. The launcher's
// note is RIVULET_LAUNCHER_TUNABLES=- (the user had none) or RIVULET_LAUNCHER_TUNABLES= followed by
// the user's whole `GLIBC_TUNABLES=...` entry. Done on the initial environment array itself: libc
// takes it as `environ` only after `.preinit_array` (getenv and setenv do not see it yet), and no
// other thread exists.
static const char launcher_note[] = "RIVULET_LAUNCHER_TUNABLES=";
static const char tunables_name[] = "GLIBC_TUNABLES=";

static void rivulet_remove_entry(char **envp, size_t index) {
    for (; envp[index] != NULL; index++) envp[index] = envp[index + 1];
}

static void rivulet_restore_tunables(char **envp) {
    if (envp == NULL) return;
    size_t note = SIZE_MAX;
    size_t tunables = SIZE_MAX;
    for (size_t index = 0; envp[index] != NULL; index++) {
        if (strncmp(envp[index], launcher_note, sizeof launcher_note - 1) == 0) note = index;
        if (strncmp(envp[index], tunables_name, sizeof tunables_name - 1) == 0) tunables = index;
    }
    if (note == SIZE_MAX) return;
    char *users = envp[note] + sizeof launcher_note - 1;
    if (tunables != SIZE_MAX && strncmp(users, tunables_name, sizeof tunables_name - 1) == 0) {
        envp[tunables] = users;
        rivulet_remove_entry(envp, note);
    } else if (tunables != SIZE_MAX) {
        // Removed from the back first, so the other's place stays right.
        rivulet_remove_entry(envp, note > tunables ? note : tunables);
        rivulet_remove_entry(envp, note > tunables ? tunables : note);
    } else {
        rivulet_remove_entry(envp, note);
    }
}

static void rivulet_early_setup(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    // Started by the `rivulet` launcher, the process would be listed as `rivulet-engine` (its
    // file's name); every thread made later inherits this name.
    prctl(PR_SET_NAME, "rivulet", 0, 0, 0);
    rivulet_restore_tunables(envp);
}

__attribute__((section(".preinit_array"), used)) static void (*const rivulet_preinit)(int, char **, char **) =
    rivulet_early_setup;

int rivulet_early_signals_installed(void) { return 1; }
