// The `rivulet` command: blocks SIGINT and SIGTERM, then replaces itself with the engine installed
// beside it (`rivulet-engine`, the Swift program that does the work).
//
// Why a launcher: the engine is mapped and relocated with its 32 shared libraries (Swift's runtime,
// Foundation, ICU, NIO's) for about 15 ms before any of its code runs, and a stop signal in that
// time ended the process by the default action instead of an orderly stop (exit 130/143). This
// program is linked statically, so nothing runs before the `.preinit_array` entry of CEarlySignals
// (the engine's own, linked in here too) blocks the two signals; the mask and any signal already
// pending are kept across `execv`, and the engine's signal thread takes them once it is ready.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "CEarlySignals.h"

static const char engine_name[] = "rivulet-engine";
static const char tcache_tunable[] = "glibc.malloc.tcache_count=65535";

// Raises glibc's per-thread cache of freed blocks for the engine (read by the dynamic loader as the
// engine starts, so it must be in the environment `execv` passes). By default a thread keeps 7 freed
// blocks of a size; values made on one thread and freed together later (a batch of lines decoded on
// a helper, results handed between threads) overflow it, and the next batch's allocations then take
// malloc's slow path through the arena's bins (6% of a two-thread W2 run). The user's own setting of
// the count stands. The engine puts GLIBC_TUNABLES back as the user had it before anything it starts
// could see it, from the note RIVULET_LAUNCHER_TUNABLES: "-" when the user had none, else the user's
// whole entry (see CEarlySignals).
static void raise_allocator_cache(void) {
    const char *user = getenv("GLIBC_TUNABLES");
    if (user != NULL && strstr(user, "glibc.malloc.tcache_count=") != NULL) return;
    size_t user_length = user == NULL ? 0 : strlen(user);
    char *note = malloc(sizeof "GLIBC_TUNABLES=" + user_length);
    char *tunables = malloc(user_length + sizeof tcache_tunable + 1);
    if (note == NULL || tunables == NULL) return;
    if (user == NULL) {
        strcpy(note, "-");
        strcpy(tunables, tcache_tunable);
    } else {
        strcpy(note, "GLIBC_TUNABLES=");
        strcat(note, user);
        memcpy(tunables, user, user_length);
        tunables[user_length] = ':';
        memcpy(tunables + user_length + 1, tcache_tunable, sizeof tcache_tunable);
    }
    if (setenv("RIVULET_LAUNCHER_TUNABLES", note, 1) != 0) return;
    if (setenv("GLIBC_TUNABLES", tunables, 1) != 0) unsetenv("RIVULET_LAUNCHER_TUNABLES");
}

int main(int argc, char **argv) {
    (void)argc;
    (void)rivulet_early_signals_installed();
    // The engine is found beside the real file of this program, wherever a link to it is called from.
    char path[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - sizeof engine_name);
    if (length <= 0) {
        fprintf(stderr, "rivulet: error: cannot find its own file (/proc/self/exe): %s\n", strerror(errno));
        return 127;
    }
    path[length] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == NULL) {
        fprintf(stderr, "rivulet: error: its own file has no folder: %s\n", path);
        return 127;
    }
    memcpy(slash + 1, engine_name, sizeof engine_name);
    raise_allocator_cache();
    execv(path, argv);
    fprintf(stderr,
        "rivulet: error: cannot start %s: %s\n"
        "  rivulet-engine is built and installed beside rivulet "
        "(swift build --product rivulet-engine, or make install)\n",
        path, strerror(errno));
    return 127;
}
