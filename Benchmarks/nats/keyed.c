#define _GNU_SOURCE
// The hand-written side of `Benchmarks/run.sh nats-keyed`: count and sum per key per event-time
// minute over partitioned subjects, as the pipeline
//   nats (group, partitions) -> eventTime {time: .t, maxDelay: 10s} -> aggregate {by: .key,
//   every: 1m, fields: {n: count, sum: {sum: .v}}} -> nats sink (msgId GROUP-KEY-START)
// does it: a durable consumer per partition, fetched in turn; a watermark per partition (its
// latest time less 10 s) and the lowest of them closing windows; a closed window's results
// published asynchronously (msgId PREFIX-KEY-START) and waited for. It acknowledges each batch once counted (Rivulet
// waits until the window holding a message was published: the loop is the cheaper of the two).
//   loop setup-keyed URL                          streams BENCH_KEYED (keyed.*), BENCH_KOUT (kout.>)
//   loop publish-keyed URL N KEYS PARTITIONS STEP N events {"key","t","v"} t = STEP ms apart,
//                                                 to keyed.P (FNV-1a of the key mod PARTITIONS),
//                                                 then one event an hour later in each partition
//   loop run-keyed URL PREFIX N PARTITIONS BATCH  reads the N events and the closing ones
#include <nats/nats.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void check(natsStatus status, const char *doing);
void addStream(jsCtx *js, const char *name, const char *subject);

enum { WINDOW_MS = 60000, MAX_DELAY_MS = 10000, MAX_PARTITIONS = 64 };

static uint32_t fnv1a(const char *text, int length) {
    uint32_t hash = 2166136261u;
    for (int i = 0; i < length; i++) {
        hash ^= (uint8_t)text[i];
        hash *= 16777619u;
    }
    return hash;
}

typedef struct {
    char key[32];
    int64_t window;
    int64_t count;
    double sum;
    int used;
} Entry;

typedef struct {
    Entry *entries;
    size_t capacity, size;
} Table;

static void tableInit(Table *table, size_t capacity) {
    table->entries = calloc(capacity, sizeof(Entry));
    table->capacity = capacity;
    table->size = 0;
}

static Entry *slot(Table *table, const char *key, int length, int64_t window) {
    size_t mask = table->capacity - 1;
    size_t i = (fnv1a(key, length) ^ (uint32_t)(window * 2654435761u)) & mask;
    while (table->entries[i].used) {
        Entry *entry = &table->entries[i];
        if (entry->window == window && strncmp(entry->key, key, length) == 0 && entry->key[length] == 0) return entry;
        i = (i + 1) & mask;
    }
    return &table->entries[i];
}

static void tableMove(Table *into, Table *from, int64_t keepFrom) {
    for (size_t i = 0; i < from->capacity; i++) {
        Entry *entry = &from->entries[i];
        if (!entry->used || entry->window < keepFrom) continue;
        *slot(into, entry->key, (int)strlen(entry->key), entry->window) = *entry;
        into->size++;
    }
}

static Entry *lookup(Table *table, const char *key, int length, int64_t window) {
    if (table->size * 2 >= table->capacity) {
        Table bigger;
        tableInit(&bigger, table->capacity * 2);
        tableMove(&bigger, table, INT64_MIN);
        free(table->entries);
        *table = bigger;
    }
    Entry *entry = slot(table, key, length, window);
    if (!entry->used) {
        entry->used = 1;
        memcpy(entry->key, key, length);
        entry->key[length] = 0;
        entry->window = window;
        table->size++;
    }
    return entry;
}

// Publishes every window that ends at or before `watermark`, waits for the acknowledgements,
// and keeps only the open ones.
static void closeWindows(jsCtx *js, const char *prefix, Table *table, int64_t watermark) {
    int64_t firstOpen = watermark / WINDOW_MS;  // windows before it end by the watermark
    char buffer[160], id[128];
    int published = 0;
    for (size_t i = 0; i < table->capacity; i++) {
        Entry *entry = &table->entries[i];
        if (!entry->used || entry->window >= firstOpen) continue;
        long long start = (long long)entry->window * WINDOW_MS;
        int length = snprintf(
            buffer, sizeof buffer, "{\"key\":\"%s\",\"start\":%lld,\"n\":%lld,\"sum\":%.17g}", entry->key, start,
            (long long)entry->count, entry->sum);
        snprintf(id, sizeof id, "%s-%s-%lld", prefix, entry->key, start);
        jsPubOptions options;
        jsPubOptions_Init(&options);
        options.MsgId = id;
        check(js_PublishAsync(js, "kout.results", buffer, length, &options), "publish");
        published++;
    }
    if (published == 0) return;
    check(js_PublishAsyncComplete(js, NULL), "publish complete");
    Table open;
    tableInit(&open, table->capacity);
    tableMove(&open, table, firstOpen);
    free(table->entries);
    *table = open;
}

// The text of "key":"…" and the numbers after "t": and "v": in an event `publish-keyed` wrote.
static int parse(const char *data, int length, const char **key, int *keyLength, int64_t *time, double *value) {
    const char *found = memmem(data, length, "\"key\":\"", 7);
    if (!found) return 0;
    *key = found + 7;
    const char *end = memchr(*key, '"', data + length - *key);
    if (!end) return 0;
    *keyLength = (int)(end - *key);
    const char *t = memmem(end, data + length - end, "\"t\":", 4);
    const char *v = memmem(end, data + length - end, "\"v\":", 4);
    if (!t || !v || *keyLength >= 32) return 0;
    *time = strtoll(t + 4, NULL, 10);
    *value = strtod(v + 4, NULL);
    return 1;
}

int keyed(const char *mode, int argc, char **argv, jsCtx *js) {
    jsErrCode code = 0;
    if (strcmp(mode, "setup-keyed") == 0) {
        addStream(js, "BENCH_KEYED", "keyed.*");
        addStream(js, "BENCH_KOUT", "kout.>");
    } else if (strcmp(mode, "publish-keyed") == 0 && argc >= 7) {
        long count = atol(argv[3]), keys = atol(argv[4]);
        int partitions = atoi(argv[5]);
        long step = atol(argv[6]);
        char buffer[128], key[32], subject[32];
        long long last = 0;
        for (long i = 0; i < count; i++) {
            int keyLength = snprintf(key, sizeof key, "k%ld", i % keys);
            last = (long long)i * step;
            int length = snprintf(buffer, sizeof buffer, "{\"key\":\"%s\",\"t\":%lld,\"v\":%ld}", key, last, i % 10);
            snprintf(subject, sizeof subject, "keyed.%u", fnv1a(key, keyLength) % (uint32_t)partitions);
            check(js_PublishAsync(js, subject, buffer, length, NULL), "publish");
        }
        for (int p = 0; p < partitions; p++) {
            int length = snprintf(buffer, sizeof buffer, "{\"key\":\"end-%d\",\"t\":%lld,\"v\":0}", p, last + 3600000);
            snprintf(subject, sizeof subject, "keyed.%d", p);
            check(js_PublishAsync(js, subject, buffer, length, NULL), "publish");
        }
        check(js_PublishAsyncComplete(js, NULL), "publish complete");
    } else if (strcmp(mode, "run-keyed") == 0 && argc >= 7) {
        const char *prefix = argv[3];
        long total = atol(argv[4]);
        int partitions = atoi(argv[5]), batch = atoi(argv[6]);
        if (partitions > MAX_PARTITIONS) return 1;
        natsSubscription *subscriptions[MAX_PARTITIONS];
        int64_t latest[MAX_PARTITIONS];
        for (int p = 0; p < partitions; p++) {
            char subject[32], durable[64];
            snprintf(subject, sizeof subject, "keyed.%d", p);
            snprintf(durable, sizeof durable, "%s-p%d", prefix, p);
            jsSubOptions options;
            jsSubOptions_Init(&options);
            options.Stream = "BENCH_KEYED";
            options.Config.AckPolicy = js_AckExplicit;
            options.Config.MaxAckPending = 20000;
            check(js_PullSubscribe(&subscriptions[p], js, subject, durable, NULL, &options, &code), "subscribe");
            latest[p] = INT64_MIN;
        }
        Table table;
        tableInit(&table, 1 << 16);
        long done = 0, late = 0;
        int64_t watermark = INT64_MIN;
        while (done < total + partitions) {
            for (int p = 0; p < partitions; p++) {
                natsMsgList list;
                natsStatus status = natsSubscription_Fetch(&list, subscriptions[p], batch, 20, &code);
                if (status == NATS_TIMEOUT) continue;
                check(status, "fetch");
                for (int i = 0; i < list.Count; i++) {
                    const char *key;
                    int keyLength;
                    int64_t time;
                    double value;
                    if (!parse(natsMsg_GetData(list.Msgs[i]), natsMsg_GetDataLength(list.Msgs[i]), &key, &keyLength,
                            &time, &value))
                        continue;
                    if (time > latest[p]) latest[p] = time;
                    if (time < watermark) {
                        late++;
                        continue;
                    }
                    int64_t window = time >= 0 ? time / WINDOW_MS : (time - WINDOW_MS + 1) / WINDOW_MS;
                    Entry *entry = lookup(&table, key, keyLength, window);
                    entry->count++;
                    entry->sum += value;
                }
                for (int i = 0; i < list.Count; i++) check(natsMsg_Ack(list.Msgs[i], NULL), "ack");
                done += list.Count;
                natsMsgList_Destroy(&list);
                int64_t lowest = INT64_MAX;
                for (int q = 0; q < partitions; q++) {
                    int64_t mark = latest[q] == INT64_MIN ? INT64_MIN : latest[q] - MAX_DELAY_MS;
                    if (mark < lowest) lowest = mark;
                }
                if (lowest != INT64_MIN && lowest / WINDOW_MS > watermark / WINDOW_MS) closeWindows(js, prefix, &table, lowest);
                if (lowest > watermark) watermark = lowest;
            }
        }
        if (late > 0) fprintf(stderr, "loop: %ld late events\n", late);
        for (int p = 0; p < partitions; p++) natsSubscription_Destroy(subscriptions[p]);
        free(table.entries);
    } else {
        return 1;
    }
    return 0;
}
