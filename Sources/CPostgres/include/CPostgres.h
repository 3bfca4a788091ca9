#ifndef RIVULET_CPOSTGRES_H
#define RIVULET_CPOSTGRES_H

// libpq, PostgreSQL's C client. It is loaded on the first call of one of its functions (lazy.c),
// not at every start of the engine.
#include <postgresql/libpq-fe.h>

/// NULL once libpq is loaded (this loads it); else why it cannot be.
const char *rivulet_postgres_load_error(void);

#endif
