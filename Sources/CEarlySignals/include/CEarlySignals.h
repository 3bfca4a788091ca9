#ifndef RIVULET_EARLY_SIGNALS_H
#define RIVULET_EARLY_SIGNALS_H

/// Always 1: the executable links the object whose `.preinit_array` entry blocks SIGINT and
/// SIGTERM before any initialiser runs. Calling it keeps that object in the link.
int rivulet_early_signals_installed(void);

#endif
