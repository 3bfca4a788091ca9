#ifndef RIVULET_CSQLITE_H
#define RIVULET_CSQLITE_H

// SQLite, for the state store and the `sqlite` source and sink. libsqlite3 is loaded on the first
// call of one of its functions (lazy.c), not at every start of the engine.
#include <sqlite3.h>

/// NULL once libsqlite3 is loaded (this loads it); else why it cannot be.
const char *rivulet_sqlite_load_error(void);

#endif
