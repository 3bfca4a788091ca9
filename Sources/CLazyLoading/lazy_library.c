#include "lazy_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// OPENSSL_INIT_NO_ATEXIT of <openssl/crypto.h> (OpenSSL 1.1.1b and later), not included here: the
// engine is not built against OpenSSL, only the libraries it loads are.
#define RIVULET_OPENSSL_INIT_NO_ATEXIT 0x00080000UL

/// Turns off the cleanup OpenSSL registers with atexit, when `handle` brought OpenSSL in (libnats
/// and libpq do). It frees OpenSSL's locks while other threads may still be in OpenSSL (a libnats
/// thread when a signal ends the run), which then crash on a freed lock: exit status 139 instead
/// of 130. The process's end frees that memory anyway. Called before anything starts OpenSSL,
/// which registers the cleanup (or not) on its first initialisation.
static void rivulet_lazy_keep_openssl_at_exit(void *handle) {
    typedef int (*openssl_init)(uint64_t options, const void *settings);
    openssl_init init = (openssl_init)dlsym(handle, "OPENSSL_init_crypto");
    if (init != NULL) (void)init(RIVULET_OPENSSL_INIT_NO_ATEXIT, NULL);
}

// One lock for every library: taken only until a library is loaded (or found missing).
static pthread_mutex_t rivulet_lazy_lock = PTHREAD_MUTEX_INITIALIZER;

static void rivulet_lazy_load(struct rivulet_lazy_library *library) {
    void *handle = NULL;
    const char *first_error = NULL;
    char first[256] = "";
    for (const char *const *file = library->files; *file != NULL && handle == NULL; file++) {
        handle = dlopen(*file, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL && first_error == NULL) {
            const char *why = dlerror();
            snprintf(first, sizeof first, "%s", why != NULL ? why : *file);
            first_error = first;
        }
    }
    if (handle == NULL) {
        snprintf(library->error, sizeof library->error, "%s cannot be loaded: %s; install that package",
                 library->package, first_error != NULL ? first_error : "no file to try");
        __atomic_store_n(&library->state, 2, __ATOMIC_RELEASE);
        return;
    }
    rivulet_lazy_keep_openssl_at_exit(handle);
    for (int index = 0; index < library->count; index++) {
        void *function = dlsym(handle, library->names[index]);
        if (function == NULL) {
            snprintf(library->error, sizeof library->error, "%s has no function %s: a version older than the one built against",
                     library->package, library->names[index]);
            dlclose(handle);
            __atomic_store_n(&library->state, 2, __ATOMIC_RELEASE);
            return;
        }
        library->pointers[index] = function;
    }
    library->handle = handle;
    __atomic_store_n(&library->state, 1, __ATOMIC_RELEASE);
}

const char *rivulet_lazy_load_error(struct rivulet_lazy_library *library) {
    int state = __atomic_load_n(&library->state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        pthread_mutex_lock(&rivulet_lazy_lock);
        if (__atomic_load_n(&library->state, __ATOMIC_ACQUIRE) == 0) rivulet_lazy_load(library);
        pthread_mutex_unlock(&rivulet_lazy_lock);
        state = __atomic_load_n(&library->state, __ATOMIC_ACQUIRE);
    }
    return state == 1 ? NULL : library->error;
}

void *rivulet_lazy_function(struct rivulet_lazy_library *library, int index) {
    if (__atomic_load_n(&library->state, __ATOMIC_ACQUIRE) != 1) {
        const char *error = rivulet_lazy_load_error(library);
        if (error != NULL) {
            fprintf(stderr, "rivulet: error: %s\n", error);
            abort();
        }
    }
    return library->pointers[index];
}
