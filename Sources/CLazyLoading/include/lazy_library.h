#ifndef RIVULET_LAZY_LIBRARY_H
#define RIVULET_LAZY_LIBRARY_H

// A shared library loaded on the first call of one of its functions, rather than by the dynamic
// loader at every start of the engine: libnats and libpq bring some twenty libraries of their own
// (OpenSSL, GnuTLS, Kerberos, LDAP...), a fifth of the process's start, and libsqlite3 half a
// millisecond more, which most runs never use. Each function the Swift code calls is defined in the
// target's lazy.c (written by scripts/lazy-libraries.py) with the header's prototype, and calls the
// library's through a pointer.

#include <stddef.h>

/// One library: what to load, and what was found.
struct rivulet_lazy_library {
    /// What a user installs to have it, for the error.
    const char *package;
    /// The file names tried in turn with dlopen, ended by NULL.
    const char *const *files;
    /// The functions looked up, in the order of `pointers`.
    const char *const *names;
    /// The functions found (`count` of them).
    void **pointers;
    int count;
    /// 0 not tried yet, 1 loaded, 2 failed (`error` says why); read with acquire ordering.
    int state;
    void *handle;
    char error[512];
};

/// NULL once `library` is loaded (it is loaded by the first caller); else why it cannot be.
const char *rivulet_lazy_load_error(struct rivulet_lazy_library *library);

/// The library's function at `index`, loading the library first if needed. A library that cannot
/// be loaded ends the process with its error: components ask `rivulet_lazy_load_error` (through
/// their target's `…_load_error`) before their first call, so a user never meets that.
void *rivulet_lazy_function(struct rivulet_lazy_library *library, int index);

#endif
