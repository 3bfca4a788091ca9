/*
 * rivulet.h — write a Rivulet `wasm` operator plugin in C (plugin ABI version 1).
 *
 * Include it in exactly one .c file of the plugin; it defines the exports every plugin needs
 * (rivulet_abi_version, rivulet_buffer). Needs no C library: build with
 *
 *     clang --target=wasm32 -O2 -nostdlib -fno-builtin -mbulk-memory -Wl,--no-entry -o plugin.wasm plugin.c
 *
 * The ABI itself (what crosses the boundary, who owns which memory) is in docs/plugins.md; this
 * header is one way to speak it, not the only one.
 */
#ifndef RIVULET_H
#define RIVULET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RIVULET_ABI_VERSION 1

/* Marks a function the host calls: RIVULET_EXPORT(normalise) int normalise(const char *, size_t). */
#define RIVULET_EXPORT(name) __attribute__((export_name(#name)))
#define RIVULET_IMPORT(name) __attribute__((import_module("rivulet"), import_name(#name)))

/* Emits one element: `length` bytes of JSON text. The host copies them before it returns. */
RIVULET_IMPORT(emit) void rivulet_emit(const char *json, size_t length);
/* Says why the current call fails; the call then returns non-zero. */
RIVULET_IMPORT(error) void rivulet_error(const char *message, size_t length);

/* A module that keeps nothing between elements says so (lint then does not warn that a resumed
 * run starts it empty). */
#define RIVULET_STATELESS() \
    RIVULET_EXPORT(rivulet_stateless) void rivulet_stateless(void) {}

/* ---- memory: a heap that only grows (plugins are small; state lives in static arrays) ---- */

extern unsigned char __heap_base;
static uintptr_t rivulet__heap_top;

/* `size` bytes, 8-aligned, never freed; NULL when the memory cap refuses to grow. */
static void *rivulet_alloc(size_t size) {
    if (rivulet__heap_top == 0) rivulet__heap_top = (uintptr_t)&__heap_base;
    uintptr_t start = (rivulet__heap_top + 7) & ~(uintptr_t)7;
    uintptr_t end = start + size;
    uintptr_t limit = __builtin_wasm_memory_size(0) * 65536;
    if (end > limit) {
        size_t pages = (end - limit + 65535) / 65536;
        if (__builtin_wasm_memory_grow(0, pages) == (size_t)-1) return NULL;
    }
    rivulet__heap_top = end;
    return (void *)start;
}

/* ---- the two exports every plugin has ---- */

RIVULET_EXPORT(rivulet_abi_version) int rivulet_abi_version(void) { return RIVULET_ABI_VERSION; }

static char *rivulet__buffer;
static size_t rivulet__buffer_size;

/* Where the host writes the next input: kept until the host asks for a bigger one. */
RIVULET_EXPORT(rivulet_buffer) char *rivulet_buffer(size_t size) {
    if (size > rivulet__buffer_size) {
        char *grown = rivulet_alloc(size);
        if (grown == NULL) return NULL;
        rivulet__buffer = grown;
        rivulet__buffer_size = size;
    }
    return rivulet__buffer;
}

/* ---- small helpers ---- */

static size_t rivulet_strlen(const char *text) {
    size_t length = 0;
    while (text[length] != 0) length++;
    return length;
}

static bool rivulet_equal(const char *a, size_t a_length, const char *b, size_t b_length) {
    if (a_length != b_length) return false;
    for (size_t i = 0; i < a_length; i++)
        if (a[i] != b[i]) return false;
    return true;
}

/* Fails the call with `message` (a C string): `return rivulet_fail("no user");`. */
static int rivulet_fail(const char *message) {
    rivulet_error(message, rivulet_strlen(message));
    return 1;
}

/* ---- reading JSON: one field of the top-level object, without copying ---- */

/* A span of the input: for a string, the bytes between its quotes (escapes kept as written). */
typedef struct {
    const char *start;
    size_t length;
    bool is_string;
} rivulet_span;

static size_t rivulet__space(const char *json, size_t n, size_t at) {
    while (at < n && (json[at] == ' ' || json[at] == '\n' || json[at] == '\r' || json[at] == '\t')) at++;
    return at;
}

/* The index just past the string starting at `at` (a quote), or n. */
static size_t rivulet__string_end(const char *json, size_t n, size_t at) {
    for (at++; at < n; at++) {
        if (json[at] == '\\') at++;
        else if (json[at] == '"') return at + 1;
    }
    return n;
}

/* The index just past the value starting at `at`. */
static size_t rivulet__value_end(const char *json, size_t n, size_t at) {
    if (at >= n) return n;
    if (json[at] == '"') return rivulet__string_end(json, n, at);
    if (json[at] == '{' || json[at] == '[') {
        int depth = 0;
        while (at < n) {
            char c = json[at];
            if (c == '"') { at = rivulet__string_end(json, n, at); continue; }
            if (c == '{' || c == '[') depth++;
            if (c == '}' || c == ']') {
                depth--;
                if (depth == 0) return at + 1;
            }
            at++;
        }
        return n;
    }
    while (at < n && json[at] != ',' && json[at] != '}' && json[at] != ']' && json[at] != ' ' && json[at] != '\n')
        at++;
    return at;
}

/* Finds `field` of the top-level object in `json`; false if it is not there. */
static bool rivulet_field(const char *json, size_t n, const char *field, rivulet_span *found) {
    size_t field_length = rivulet_strlen(field);
    size_t at = rivulet__space(json, n, 0);
    if (at >= n || json[at] != '{') return false;
    at++;
    while (true) {
        at = rivulet__space(json, n, at);
        if (at >= n || json[at] != '"') return false;
        size_t key_end = rivulet__string_end(json, n, at);
        bool match = rivulet_equal(json + at + 1, key_end - at - 2, field, field_length);
        at = rivulet__space(json, n, key_end);
        if (at >= n || json[at] != ':') return false;
        at = rivulet__space(json, n, at + 1);
        size_t value_end = rivulet__value_end(json, n, at);
        if (match) {
            bool is_string = json[at] == '"';
            found->start = json + at + (is_string ? 1 : 0);
            found->length = value_end - at - (is_string ? 2 : 0);
            found->is_string = is_string;
            return true;
        }
        at = rivulet__space(json, n, value_end);
        if (at >= n || json[at] != ',') return false;
        at++;
    }
}

/* A whole number field (as written, e.g. `3`); `fallback` when missing or not a number. */
static long long rivulet_field_int(const char *json, size_t n, const char *field, long long fallback) {
    rivulet_span span;
    if (!rivulet_field(json, n, field, &span) || span.is_string || span.length == 0) return fallback;
    long long value = 0;
    bool negative = span.start[0] == '-';
    for (size_t i = negative ? 1 : 0; i < span.length; i++) {
        if (span.start[i] < '0' || span.start[i] > '9') return fallback;
        value = value * 10 + (span.start[i] - '0');
    }
    return negative ? -value : value;
}

#endif
