#!/usr/bin/env python3
"""What the exec backend costs per badge: medians of whole-process runs of
`badge generate --output` through an exec plugin, against running the same
plugin directly with the same request, and against badge's own procedural
backend. Usage: scripts/bench_exec.py [path/to/badge] [runs]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
badge = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, ".build/release/badge")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 21
work = tempfile.mkdtemp(prefix="badge-bench-exec-")
source = os.path.join(work, "source.png")
subprocess.run([badge, "generate", "--output", source, "--size", "256", "--seed", "1", "source"], check=True,
               stdout=subprocess.DEVNULL, env={**os.environ, "BADGE_STORE": work})

# The cheapest plugin there is: it copies a PNG. What remains is the protocol's own cost.
copier = os.path.join(work, "copy.sh")
with open(copier, "w") as f:
    f.write('#!/bin/sh\n[ "$BADGE_KIND" = availability ] && { echo \'{"available": true}\'; exit 0; }\n'
            'cp "$PNG_SOURCE" "$BADGE_OUTPUT"\necho \'{"ok": true}\'\n')
os.chmod(copier, 0o755)
pillow = os.path.join(repo, "Plugins/Examples/python-pillow/badge_pillow.py")
config = os.path.join(work, "config.json")
with open(config, "w") as f:
    json.dump({"backends": {
        "copy": {"type": "exec", "command": [copier], "env": {"PNG_SOURCE": source}},
        "pillow": {"type": "exec", "command": ["/usr/bin/python3", pillow]},
    }}, f)


def median_ms(command, stdin=None, env=None):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, input=stdin, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def request(output):
    return json.dumps({"protocol": 1, "kind": "generate", "prompt": "Run a marathon", "size": 256, "style": None,
                       "seed": 1, "options": {}, "output": output}).encode()


def through_badge(backend):
    return median_ms([badge, "generate", "--config", config, "--backend", backend, "--output", os.path.join(work, "out.png"),
                      "--size", "256", "--seed", "1", "Run a marathon"], env={**os.environ, "BADGE_STORE": work})


env = {**os.environ, "BADGE_KIND": "generate", "PNG_SOURCE": source, "BADGE_OUTPUT": os.path.join(work, "direct.png")}
rows = [
    ("procedural backend, whole badge process", through_badge("procedural"), None),
    ("exec: copy.sh through badge", through_badge("copy"), median_ms([copier], env=env)),
    ("exec: badge_pillow.py through badge", through_badge("pillow"),
     median_ms(["/usr/bin/python3", pillow], stdin=request(os.path.join(work, "direct.png")))),
]
availability = median_ms(["/usr/bin/python3", pillow], stdin=b'{"protocol":1,"kind":"availability"}')
startup = median_ms([badge, "--help"])
print(f"exec backend overhead: {runs} runs each, medians, 256 px, {badge}")
for name, via_badge, direct in rows:
    extra = "" if direct is None else f"   plugin alone {direct:7.1f} ms   badge adds {via_badge - direct:6.1f} ms"
    print(f"{name:42s} {via_badge:7.1f} ms{extra}")
print(f"{'badge --help (process start-up)':42s} {startup:7.1f} ms")
print(f"{'badge_pillow.py availability answer alone':42s} {availability:7.1f} ms   (badge asks before every badge)")
subprocess.run(["rm", "-rf", work])
