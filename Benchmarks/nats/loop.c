// The hand-written side of `Benchmarks/run.sh nats`, on the same C client Rivulet uses:
//   loop setup URL               streams BENCH_IN (bench.in.>) and BENCH_OUT (bench.out.>), empty
//   loop publish URL N           N orders {"id","qty","price"} into BENCH_IN
//   loop wait URL STREAM N       purges STREAM, says "ready", returns when it holds N messages
//   loop run URL DURABLE N BATCH the fetch/filter/map/publish/ack loop over N messages
// `run` does what the pipeline filter .qty > 0 -> map {id, total} -> nats sink does: fetch a
// batch, publish each kept order's total asynchronously, wait for JetStream's acknowledgements of
// the batch, then acknowledge the batch's messages.
// For `Benchmarks/run.sh nats-keyed` (keyed.c): setup-keyed, publish-keyed and run-keyed.
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int keyed(const char *mode, int argc, char **argv, jsCtx *js);

void check(natsStatus status, const char *doing) {
    if (status != NATS_OK) {
        fprintf(stderr, "loop: %s: %s\n", doing, natsStatus_GetText(status));
        exit(1);
    }
}

double now(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return time.tv_sec + time.tv_nsec / 1e9;
}

void addStream(jsCtx *js, const char *name, const char *subject) {
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    config.Name = name;
    const char *subjects[] = {subject};
    config.Subjects = subjects;
    config.SubjectsLen = 1;
    config.Storage = js_FileStorage;
    jsErrCode code = 0;
    js_DeleteStream(js, name, NULL, &code);
    check(js_AddStream(NULL, js, &config, NULL, &code), "add stream");
}

// The number after "key": in a flat JSON object (the orders are written by `publish`).
static double field(const char *data, int length, const char *key) {
    char pattern[32];
    int patternLength = snprintf(pattern, sizeof pattern, "\"%s\":", key);
    for (int i = 0; i + patternLength <= length; i++) {
        if (memcmp(data + i, pattern, patternLength) == 0) return strtod(data + i + patternLength, NULL);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: loop setup|publish|wait|run URL ...\n");
        return 2;
    }
    const char *mode = argv[1];
    natsConnection *connection = NULL;
    jsCtx *js = NULL;
    jsOptions options;
    jsOptions_Init(&options);
    options.PublishAsync.MaxPending = 1000;
    check(natsConnection_ConnectTo(&connection, argv[2]), "connect");
    check(natsConnection_JetStream(&js, connection, &options), "jetstream");
    jsErrCode code = 0;

    if (strcmp(mode, "setup") == 0) {
        addStream(js, "BENCH_IN", "bench.in.>");
        addStream(js, "BENCH_OUT", "bench.out.>");
    } else if (strcmp(mode, "publish") == 0) {
        long count = atol(argv[3]);
        char buffer[128];
        for (long id = 1; id <= count; id++) {
            int length = snprintf(buffer, sizeof buffer, "{\"id\":%ld,\"qty\":%ld,\"price\":2.5}", id, id % 7);
            check(js_PublishAsync(js, "bench.in.orders", buffer, length, NULL), "publish");
        }
        check(js_PublishAsyncComplete(js, NULL), "publish complete");
    } else if (strcmp(mode, "wait") == 0) {
        const char *stream = argv[3];
        uint64_t expected = strtoull(argv[4], NULL, 10);
        check(js_PurgeStream(js, stream, NULL, &code), "purge");
        printf("ready\n");
        fflush(stdout);
        double start = now();
        for (;;) {
            jsStreamInfo *info = NULL;
            check(js_GetStreamInfo(&info, js, stream, NULL, &code), "stream info");
            uint64_t messages = info->State.Msgs;
            jsStreamInfo_Destroy(info);
            if (messages >= expected) break;
            nats_Sleep(10);
        }
        printf("%.3f\n", now() - start);
    } else if (strcmp(mode, "run") == 0) {
        const char *durable = argv[3];
        long total = atol(argv[4]);
        int batch = atoi(argv[5]);
        jsSubOptions subscription;
        jsSubOptions_Init(&subscription);
        subscription.Stream = "BENCH_IN";
        subscription.Config.AckPolicy = js_AckExplicit;
        subscription.Config.MaxAckPending = 1000;
        natsSubscription *sub = NULL;
        check(js_PullSubscribe(&sub, js, "bench.in.>", durable, NULL, &subscription, &code), "subscribe");
        long done = 0;
        char buffer[128];
        while (done < total) {
            natsMsgList list;
            natsStatus status = natsSubscription_Fetch(&list, sub, batch, 5000, &code);
            if (status == NATS_TIMEOUT) continue;
            check(status, "fetch");
            for (int i = 0; i < list.Count; i++) {
                const char *data = natsMsg_GetData(list.Msgs[i]);
                int length = natsMsg_GetDataLength(list.Msgs[i]);
                double quantity = field(data, length, "qty");
                if (!(quantity > 0)) continue;
                long id = (long)field(data, length, "id");
                int outLength = snprintf(
                    buffer, sizeof buffer, "{\"id\":%ld,\"total\":%.17g}", id, quantity * field(data, length, "price"));
                check(js_PublishAsync(js, "bench.out.orders", buffer, outLength, NULL), "publish");
            }
            check(js_PublishAsyncComplete(js, NULL), "publish complete");
            for (int i = 0; i < list.Count; i++) check(natsMsg_Ack(list.Msgs[i], NULL), "ack");
            done += list.Count;
            natsMsgList_Destroy(&list);
        }
        natsSubscription_Destroy(sub);
    } else if (keyed(mode, argc, argv, js) != 0) {
        fprintf(stderr, "loop: unknown mode %s\n", mode);
        return 2;
    }
    jsCtx_Destroy(js);
    natsConnection_Destroy(connection);
    return 0;
}
