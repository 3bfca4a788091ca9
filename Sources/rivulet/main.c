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
#include <string.h>
#include <unistd.h>

#include "CEarlySignals.h"

static const char engine_name[] = "rivulet-engine";

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
    execv(path, argv);
    fprintf(stderr,
        "rivulet: error: cannot start %s: %s\n"
        "  rivulet-engine is built and installed beside rivulet "
        "(swift build --product rivulet-engine, or make install)\n",
        path, strerror(errno));
    return 127;
}
