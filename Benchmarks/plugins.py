#!/usr/bin/env python3
"""Plugin overhead, timed from outside in one run (release builds).

1. A Swift plugin operator (wordCount, from Examples/TextPlugin) against the same work built in (an
   equivalent map expression), on 1,000,000 JSON Lines records; the outputs must be equal.
2. exec (a Python identity process plugin) against `map: .`, on 100,000 records.
3. The same wordCount four ways over the 1,000,000 records: built in (the map expression), the
   Swift plugin, a WebAssembly plugin (Benchmarks/wasm/wordcount.c) and a process plugin (Python);
   the outputs must be equal. The last line: `plugins builtin_s=… swift_s=… wasm_s=… process_s=…`.
Each is run three times (the process plugin once) and the best kept.
"""
import json, os, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
data = os.path.join(root, "Benchmarks", "data")
os.makedirs(data, exist_ok=True)
rivulet = os.path.join(root, ".build", "release", "rivulet")
plugin = os.path.join(root, "Examples", "TextPlugin", ".build", "release", "libTextPlugin.so")
wasm = os.path.join(root, "Benchmarks", ".build", "wordcount.wasm")

def best_of(command, rounds=3):
    times = []
    for _ in range(rounds):
        start = time.monotonic()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.monotonic() - start)
    return min(times)

def records(path):
    return [json.loads(line) for line in open(path) if line.strip()]

def write(name, text):
    path = os.path.join(data, name)
    with open(path, "w") as f:
        f.write(text)
    return path

words = ["stream", "of", "climate", "news", "swift", "rivulet", "search"]
with open(os.path.join(data, "plugins-1m.jsonl"), "w") as f:
    for i in range(1_000_000):
        f.write(json.dumps({"t": " ".join(words[(i + k) % 7] for k in range(1 + i % 5))}) + "\n")
with open(os.path.join(data, "plugins-100k.jsonl"), "w") as f:
    for i in range(100_000):
        f.write(json.dumps({"i": i}) + "\n")
write("identity.py", "import json, sys\nfor line in sys.stdin:\n"
      "    print(json.dumps({'emit': json.loads(line)['value']}) + '\\n' + json.dumps({'done': True}), flush=True)\n")

plugin_spec = write("plugin-op.yaml", f"plugins: [{plugin}]\nsource: {{ fixture: plugins-1m.jsonl }}\n"
                    "ops: [{ wordCount: t }]\nsink: { file: plugin-op.jsonl }\n")
builtin_spec = write("builtin-op.yaml", "source: { fixture: plugins-1m.jsonl }\n"
                     "ops: [{ map: \"{text: .t, words: len(split(.t, ' '))}\" }]\nsink: { file: builtin-op.jsonl }\n")
exec_spec = write("exec-op.yaml", "source: { fixture: plugins-100k.jsonl }\n"
                  "ops: [{ exec: { command: [python3, ./identity.py] } }]\nsink: { file: exec-op.jsonl }\n")
write("wordcount.py", "import json, sys\nfor line in sys.stdin:\n"
      "    t = json.loads(line)['value']['t']\n"
      "    print(json.dumps({'emit': {'text': t, 'words': len(t.split())}}) + '\\n' + json.dumps({'done': True}), flush=True)\n")
wasm_spec = write("wasm-op.yaml", "source: { fixture: plugins-1m.jsonl }\n"
                  f"ops: [{{ wasm: {{ module: {wasm}, function: word_count }} }}]\nsink: {{ file: wasm-op.jsonl }}\n")
process_spec = write("process-op.yaml", "source: { fixture: plugins-1m.jsonl }\n"
                     "ops: [{ exec: { command: [python3, ./wordcount.py] } }]\nsink: { file: process-op.jsonl }\n")
map_spec = write("map-op.yaml", "source: { fixture: plugins-100k.jsonl }\nops: [{ map: . }]\nsink: { file: map-op.jsonl }\n")

plugin_s = best_of([rivulet, "run", plugin_spec])
builtin_s = best_of([rivulet, "run", builtin_spec])
if records(os.path.join(data, "plugin-op.jsonl")) != records(os.path.join(data, "builtin-op.jsonl")):
    sys.exit("plugins: the plugin and the built-in expression disagree")
exec_s = best_of([rivulet, "run", exec_spec], rounds=2)
map_s = best_of([rivulet, "run", map_spec])
if records(os.path.join(data, "exec-op.jsonl")) != records(os.path.join(data, "map-op.jsonl")):
    sys.exit("plugins: exec and map disagree")
print(f"plugins swift_plugin_s={plugin_s:.3f} same_work_builtin_s={builtin_s:.3f} (1,000,000 elements)")
print(f"plugins exec_s={exec_s:.3f} map_s={map_s:.3f} (100,000 elements)")
print(f"plugins swift_plugin_ns_per_element_vs_builtin={(plugin_s - builtin_s) / 1e6 * 1e9:.0f} "
      f"exec_us_per_element={(exec_s - map_s) / 1e5 * 1e6:.1f}")
wasm_s = best_of([rivulet, "run", wasm_spec])
if records(os.path.join(data, "wasm-op.jsonl")) != records(os.path.join(data, "builtin-op.jsonl")):
    sys.exit("plugins: the WebAssembly plugin and the built-in expression disagree")
process_s = best_of([rivulet, "run", process_spec], rounds=1)
if records(os.path.join(data, "process-op.jsonl")) != records(os.path.join(data, "builtin-op.jsonl")):
    sys.exit("plugins: the process plugin and the built-in expression disagree")
print(f"plugins wasm_vs_process={process_s / wasm_s:.1f}x_faster (target 10x) "
      f"wasm_vs_swift={wasm_s / plugin_s:.1f}x_the_time (target at most 5x)")
print(f"plugins builtin_s={builtin_s:.3f} swift_s={plugin_s:.3f} wasm_s={wasm_s:.3f} process_s={process_s:.3f}")
