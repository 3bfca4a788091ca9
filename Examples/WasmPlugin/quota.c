/*
 * quota — a per-key limiter: passes the first `limit` elements of each value of the field `key`
 * and drops the rest. Its counts are its state: they go into Rivulet's checkpoints (--state)
 * through rivulet_snapshot and rivulet_restore, and across a hot swap under run --watch.
 *
 *     - wasm: { module: ./quota.wasm, function: quota, config: { key: user, limit: 2 } }
 */
#include "rivulet.h"

#define MAX_KEYS 4096
#define KEY_BYTES (256 * 1024)

static char key_field[64];
static long long limit = 1;

/* An open-addressing table: each slot's key is a span of key_bytes. */
static struct { uint32_t start, length; long long count; } slots[MAX_KEYS * 2];
static char key_bytes[KEY_BYTES];
static uint32_t key_bytes_used;
static uint32_t keys;

static uint32_t hash(const char *text, size_t length) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < length; i++) h = (h ^ (unsigned char)text[i]) * 16777619u;
    return h;
}

/* The count of `key`, made (at 0) if new; NULL when the table is full. */
static long long *count_of(const char *key, size_t length) {
    uint32_t slot = hash(key, length) % (MAX_KEYS * 2);
    while (slots[slot].length != 0) {
        if (rivulet_equal(key_bytes + slots[slot].start, slots[slot].length, key, length)) return &slots[slot].count;
        slot = (slot + 1) % (MAX_KEYS * 2);
    }
    if (keys == MAX_KEYS || key_bytes_used + length > KEY_BYTES || length == 0) return NULL;
    for (size_t i = 0; i < length; i++) key_bytes[key_bytes_used + i] = key[i];
    slots[slot].start = key_bytes_used;
    slots[slot].length = (uint32_t)length;
    slots[slot].count = 0;
    key_bytes_used += (uint32_t)length;
    keys++;
    return &slots[slot].count;
}

/* config: { key: FIELD, limit: N } */
RIVULET_EXPORT(rivulet_init) int init(const char *config, size_t length) {
    rivulet_span field;
    if (!rivulet_field(config, length, "key", &field) || !field.is_string || field.length >= sizeof key_field)
        return rivulet_fail("config needs key: the field to count by");
    for (size_t i = 0; i < field.length; i++) key_field[i] = field.start[i];
    key_field[field.length] = 0;
    limit = rivulet_field_int(config, length, "limit", 1);
    if (limit < 0) return rivulet_fail("config limit must be at least 0");
    return 0;
}

RIVULET_EXPORT(quota) int quota(const char *element, size_t length) {
    rivulet_span key;
    if (!rivulet_field(element, length, key_field, &key)) return rivulet_fail("the element has no key field");
    long long *count = count_of(key.start, key.length);
    if (count == NULL) return rivulet_fail("more than 4096 keys");
    if (*count < limit) rivulet_emit(element, length);
    *count += 1;
    return 0;
}

/* The state: one line per key, "COUNT KEY\n" (a key as written in JSON holds no raw newline). */
RIVULET_EXPORT(rivulet_snapshot) int snapshot(void) {
    char number[24];
    for (uint32_t slot = 0; slot < MAX_KEYS * 2; slot++) {
        if (slots[slot].length == 0) continue;
        long long value = slots[slot].count;
        int digits = 0;
        do { number[sizeof number - 1 - digits++] = (char)('0' + value % 10); value /= 10; } while (value > 0);
        rivulet_emit(number + sizeof number - digits, (size_t)digits);
        rivulet_emit(" ", 1);
        rivulet_emit(key_bytes + slots[slot].start, slots[slot].length);
        rivulet_emit("\n", 1);
    }
    return 0;
}

RIVULET_EXPORT(rivulet_restore) int restore(const char *state, size_t length) {
    size_t at = 0;
    while (at < length) {
        long long value = 0;
        while (at < length && state[at] >= '0' && state[at] <= '9') value = value * 10 + (state[at++] - '0');
        if (at >= length || state[at] != ' ') return rivulet_fail("a state line without its count");
        size_t start = ++at;
        while (at < length && state[at] != '\n') at++;
        long long *count = count_of(state + start, at - start);
        if (count == NULL) return rivulet_fail("the state holds more than 4096 keys");
        *count = value;
        at++;
    }
    return 0;
}
