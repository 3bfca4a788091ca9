#!/usr/bin/env python3
"""The images source against a hand-written libxml2 loop, on the same 15 MB page, in one run.

Rivulet: `rivulet run --replay` of a recording holding the page (so no network), `images` with
`emit: all`, then `len`. The loop: a C program that parses the same page with libxml2's HTML parser
(same options) into its tree and counts the img elements with a src; the ratio is against it.
Rivulet reads a page from the parser's events without a tree, so a second C loop does that too
(SAX, counting the same img elements) and is printed beside it. Best-of-3 wall times.
"""
import json, os, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
data = os.path.join(root, "Benchmarks", "data")
os.makedirs(data, exist_ok=True)
count = 200_000
page = "<html><body>" + "".join(
    f'<p><img src="x{i}.png" alt="image {i}"> filler text for a big page</p>\n' for i in range(count))
with open(os.path.join(data, "big.html"), "w") as f:
    f.write(page)
recording = {"recording": 1, "exchanges": [{"request": {"method": "GET", "path": "/big.html", "query": {}},
    "response": {"status": 200, "headers": {"content-type": "text/html; charset=utf-8"}, "bodyText": page}}]}
with open(os.path.join(data, "big-recording.json"), "w") as f:
    json.dump(recording, f)
with open(os.path.join(data, "images.yaml"), "w") as f:
    f.write('source: { images: { url: "http://bench.test/big.html", maxBytes: 50000000, emit: all } }\n'
            'ops: [{ map: len(.) }]\nsink: stdout\n')
loop_c = os.path.join(data, "images_loop.c")
with open(loop_c, "w") as f:
    f.write(r'''
#include <stdio.h>
#include <stdlib.h>
#include <libxml/HTMLparser.h>
static long count(xmlNodePtr node) {
    long n = 0;
    for (; node; node = node->next) {
        if (node->type == XML_ELEMENT_NODE && xmlStrcasecmp(node->name, BAD_CAST "img") == 0) {
            xmlChar *src = xmlGetProp(node, BAD_CAST "src");
            if (src) { n++; xmlFree(src); }
        }
        n += count(node->children);
    }
    return n;
}
int main(int argc, char **argv) {
    FILE *file = fopen(argv[1], "rb"); fseek(file, 0, SEEK_END); long size = ftell(file); rewind(file);
    char *bytes = malloc(size); fread(bytes, 1, size, file); fclose(file);
    htmlDocPtr doc = htmlReadMemory(bytes, (int)size, "http://bench.test/big.html", "UTF-8",
        HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | HTML_PARSE_COMPACT);
    printf("%ld\n", count(xmlDocGetRootElement(doc)));
    xmlFreeDoc(doc); free(bytes); return 0;
}
''')
sax_c = os.path.join(data, "images_sax_loop.c")
with open(sax_c, "w") as f:
    f.write(r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/HTMLparser.h>
#include <libxml/parserInternals.h>
static long n;
static void start(void *context, const xmlChar *name, const xmlChar **attributes) {
    if (strcmp((const char *)name, "img") != 0 || !attributes) return;
    for (int i = 0; attributes[i]; i += 2) if (strcmp((const char *)attributes[i], "src") == 0) { n++; return; }
}
int main(int argc, char **argv) {
    FILE *file = fopen(argv[1], "rb"); fseek(file, 0, SEEK_END); long size = ftell(file); rewind(file);
    char *bytes = malloc(size); fread(bytes, 1, size, file); fclose(file);
    xmlParserCtxtPtr context = xmlCreateMemoryParserCtxt(bytes, (int)size);
    memset(context->sax, 0, sizeof(htmlSAXHandler));
    context->sax->startElement = start;
    htmlCtxtUseOptions(context, HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET);
    context->html = 1;
    xmlSwitchToEncoding(context, xmlFindCharEncodingHandler("UTF-8"));
    htmlParseDocument(context);
    printf("%ld\n", n);
    xmlFreeParserCtxt(context); free(bytes); return 0;
}
''')
loop = os.path.join(data, "images_loop")
sax_loop = os.path.join(data, "images_sax_loop")
flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libxml-2.0"], capture_output=True, text=True, check=True).stdout.split()
subprocess.run(["cc", "-O2", "-o", loop, loop_c] + flags, check=True)
subprocess.run(["cc", "-O2", "-o", sax_loop, sax_c] + flags, check=True)
rivulet = os.path.join(root, ".build", "release", "rivulet")

def best(command):
    times, out = [], ""
    for _ in range(3):
        start = time.perf_counter()
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
        times.append(time.perf_counter() - start)
    return min(times), out

r_time, r_out = best([rivulet, "run", os.path.join(data, "images.yaml"), "--replay", os.path.join(data, "big-recording.json")])
l_time, l_out = best([loop, os.path.join(data, "big.html")])
s_time, s_out = best([sax_loop, os.path.join(data, "big.html")])
assert r_out == l_out == s_out == str(count), (r_out, l_out, s_out)
print(f"page {len(page) / 1e6:.1f} MB, {count} images: rivulet {r_time:.2f} s, libxml2 tree loop {l_time:.2f} s, "
      f"libxml2 SAX loop {s_time:.2f} s")
print(f"images rivulet_s={r_time:.3f} loop_s={l_time:.3f} sax_loop_s={s_time:.3f} ratio={r_time / l_time:.1f}")
