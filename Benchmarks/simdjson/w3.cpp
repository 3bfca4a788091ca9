// W3's reference at the hardware's limit: the W3 pipeline's work on event time (count and sum of
// .v per .key per minute of .ts; a window is written once the watermark, the latest time seen
// minus 10 s, passes its end; an element behind the watermark is late and dropped), written with
// simdjson's On-Demand API over the whole file and one hash table per open window.
// Usage: w3-simdjson INPUT OUTPUT
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "simdjson.h"

using namespace simdjson;

static const int64_t max_delay = 10000;

struct Window {
    std::unordered_map<std::string, size_t> index;
    std::vector<std::string> keys;
    std::vector<int64_t> counts;
    std::vector<double> sums;

    void add(std::string_view key, double v) {
        auto found = index.find(std::string(key));
        if (found != index.end()) {
            counts[found->second] += 1;
            sums[found->second] += v;
            return;
        }
        index.emplace(std::string(key), keys.size());
        keys.emplace_back(key);
        counts.push_back(1);
        sums.push_back(v);
    }
};

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: w3-simdjson INPUT OUTPUT\n");
        return 2;
    }
    padded_string input;
    if (auto error = padded_string::load(argv[1]).get(input)) {
        fprintf(stderr, "w3-simdjson: cannot read %s: %s\n", argv[1], error_message(error));
        return 1;
    }
    FILE *file = fopen(argv[2], "wb");
    if (file == nullptr) {
        fprintf(stderr, "w3-simdjson: cannot write %s\n", argv[2]);
        return 1;
    }
    ondemand::parser parser;
    ondemand::document_stream documents;
    if (auto error = parser.iterate_many(input).get(documents)) {
        fprintf(stderr, "w3-simdjson: %s\n", error_message(error));
        return 1;
    }
    std::map<int64_t, Window> windows;
    std::string out;
    char text[96];
    auto flush = [&](std::map<int64_t, Window>::iterator open) {
        const Window &window = open->second;
        for (size_t row = 0; row < window.keys.size(); row++) {
            out += "{\"key\":\"";
            out += window.keys[row];  // The generated keys need no escaping.
            double sum = window.sums[row];
            int length = sum == std::floor(sum) && std::fabs(sum) < 9e15
                ? snprintf(text, sizeof text, "\",\"start\":%lld,\"count\":%lld,\"sum\":%lld}\n",
                      (long long)(open->first * 60000), (long long)window.counts[row], (long long)sum)
                : snprintf(text, sizeof text, "\",\"start\":%lld,\"count\":%lld,\"sum\":%.17g}\n",
                      (long long)(open->first * 60000), (long long)window.counts[row], sum);
            out.append(text, static_cast<size_t>(length));
        }
        windows.erase(open);
        if (out.size() > (1 << 20)) {
            fwrite(out.data(), 1, out.size(), file);
            out.clear();
        }
    };
    bool seen = false;
    int64_t latest = 0;
    for (auto document : documents) {
        ondemand::object record;
        if (document.get_object().get(record)) return 1;
        std::string_view key;
        double v = 0, ts = 0;
        if (record["key"].get_string().get(key) || record["v"].get_double().get(v)
            || record["ts"].get_double().get(ts))
            continue;
        int64_t time = static_cast<int64_t>(ts);
        if (seen && time < latest - max_delay) continue;  // Late: dropped (none in the generated data).
        windows[static_cast<int64_t>(std::floor(ts / 60000))].add(key, v);
        if (!seen || time > latest) {
            seen = true;
            latest = time;
            int64_t watermark = latest - max_delay;
            while (!windows.empty() && (windows.begin()->first + 1) * 60000 <= watermark) flush(windows.begin());
        }
    }
    while (!windows.empty()) flush(windows.begin());
    if (fwrite(out.data(), 1, out.size(), file) != out.size() || fclose(file) != 0) {
        fprintf(stderr, "w3-simdjson: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
