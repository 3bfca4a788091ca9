#!/usr/bin/env python3
"""A Rivulet process plugin: for each article, emit one element per keyword found in its title.

Protocol (JSON Lines over stdin/stdout): read {"value": ...}; write any number of {"emit": ...},
then {"done": true}; or {"error": "message"} for an element that cannot be handled.
"""
import json
import sys

KEYWORDS = {"climate", "swift", "weather", "energy"}

for line in sys.stdin:
    article = json.loads(line)["value"]
    title = article.get("title") if isinstance(article, dict) else None
    if not isinstance(title, str):
        print(json.dumps({"error": "an article needs a title"}), flush=True)
        continue
    for word in title.lower().replace(",", " ").split():
        if word in KEYWORDS:
            print(json.dumps({"emit": {"keyword": word, "title": title}}), flush=True)
    print(json.dumps({"done": True}), flush=True)
