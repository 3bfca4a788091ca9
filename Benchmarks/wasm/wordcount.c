/*
 * wordCount as a WebAssembly plugin, for `Benchmarks/run.sh plugins`: the same work as the
 * TextPlugin's Swift `wordCount` (field `t`), emitting {text, words}.
 */
#include "rivulet.h"

RIVULET_STATELESS()

static char out[65536];

RIVULET_EXPORT(word_count) int word_count(const char *element, size_t length) {
    rivulet_span text;
    if (!rivulet_field(element, length, "t", &text) || !text.is_string) return rivulet_fail("wordCount needs text");
    if (text.length > sizeof out - 32) return rivulet_fail("the text is too long");
    size_t words = 0;
    bool inWord = false;
    for (size_t i = 0; i < text.length; i++) {
        char c = text.start[i];
        bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
        if (!space && !inWord) words++;
        inWord = !space;
    }
    size_t n = 0;
    const char *head = "{\"text\":\"";
    while (*head) out[n++] = *head++;
    for (size_t i = 0; i < text.length; i++) out[n++] = text.start[i];
    const char *middle = "\",\"words\":";
    while (*middle) out[n++] = *middle++;
    char digits[20];
    int count = 0;
    do { digits[count++] = (char)('0' + words % 10); words /= 10; } while (words > 0);
    while (count > 0) out[n++] = digits[--count];
    out[n++] = '}';
    rivulet_emit(out, n);
    return 0;
}
