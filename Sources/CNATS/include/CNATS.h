#ifndef RIVULET_CNATS_H
#define RIVULET_CNATS_H

// The NATS C client (JetStream included). libnats is loaded on the first call of one of its
// functions (lazy.c), not at every start of the engine.
#include <nats/nats.h>

/// NULL once libnats is loaded (this loads it); else why it cannot be.
const char *rivulet_nats_load_error(void);

#endif
