// W2's reference at the hardware's limit: the same filter and map as the W2 pipeline, written
// with simdjson's On-Demand API over the whole file (JSON Lines as a document stream), the output
// formatted straight into one buffer. Usage: w2-simdjson INPUT OUTPUT [project|compute|nested]
//   project: .stars >= 2500 -> {"id":…,"name":…}
//   compute: .stars >= 2500 -> {"id":…,"stars2":stars*2}
//   nested:  .owner.stars >= 2500 -> {"id":…,"login":…}
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "simdjson.h"

using namespace simdjson;

// JSON string escaping as Rivulet writes it: quote, backslash and control characters.
static void append_string(std::string &out, std::string_view text) {
    out.push_back('"');
    for (unsigned char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char escaped[8];
                snprintf(escaped, sizeof escaped, "\\u%04x", c);
                out += escaped;
            } else {
                out.push_back(static_cast<char>(c));
            }
        }
    }
    out.push_back('"');
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: w2-simdjson INPUT OUTPUT [project|compute|nested]\n");
        return 2;
    }
    std::string_view variant = argc > 3 ? argv[3] : "project";
    padded_string input;
    if (auto error = padded_string::load(argv[1]).get(input)) {
        fprintf(stderr, "w2-simdjson: cannot read %s: %s\n", argv[1], error_message(error));
        return 1;
    }
    ondemand::parser parser;
    ondemand::document_stream documents;
    if (auto error = parser.iterate_many(input).get(documents)) {
        fprintf(stderr, "w2-simdjson: %s\n", error_message(error));
        return 1;
    }
    std::string out;
    out.reserve(input.size() / 2);
    char number[32];
    for (auto document : documents) {
        ondemand::object record;
        if (document.get_object().get(record)) return 1;
        int64_t id = 0, stars = 0;
        std::string_view text;
        if (variant == "nested") {
            if (record["id"].get_int64().get(id)) return 1;
            ondemand::object owner;
            if (record["owner"].get_object().get(owner)) return 1;
            if (owner["login"].get_string().get(text)) return 1;
            if (owner["stars"].get_int64().get(stars)) return 1;
        } else {
            if (record["id"].get_int64().get(id)) return 1;
            if (variant == "project" && record["name"].get_string().get(text)) return 1;
            if (record["stars"].get_int64().get(stars)) return 1;
        }
        if (stars < 2500) continue;
        out += "{\"id\":";
        out.append(number, static_cast<size_t>(snprintf(number, sizeof number, "%lld", (long long)id)));
        if (variant == "compute") {
            out += ",\"stars2\":";
            out.append(number, static_cast<size_t>(snprintf(number, sizeof number, "%lld", (long long)(stars * 2))));
        } else {
            out += variant == "nested" ? ",\"login\":" : ",\"name\":";
            append_string(out, text);
        }
        out += "}\n";
    }
    FILE *file = fopen(argv[2], "wb");
    if (file == nullptr || fwrite(out.data(), 1, out.size(), file) != out.size() || fclose(file) != 0) {
        fprintf(stderr, "w2-simdjson: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
