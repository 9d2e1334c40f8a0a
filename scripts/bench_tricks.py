#!/usr/bin/env python3
"""What a speed trick buys on the figures a user sees, in one run.

    scripts/bench_tricks.py LABEL=BINARY LABEL=BINARY ...

Each BINARY is a release build of badge (`make binary`, copied aside): the
first is the reference, the others each lack one trick (built from a tree
with that trick taken out). In turns, so that every binary meets the same
minutes of the machine, it measures:

- a whole `badge generate` of a 1024 px procedural badge (wall time and the
  process's CPU time, medians of 21 rounds);
- `badge batch` of 200 procedural 512 px badges on every core (wall and CPU,
  5 rounds);
- `badge serve --render-only`: uncached 256 px renders a second under wrk (8
  connections, 6 s, 3 rounds) and the server's CPU time a render.

The CPU figures hold better than the wall times when the machine is shared.

It prints each figure and its change against the reference; docs/PERFORMANCE.md
("Speed tricks and what they buy") keeps the table and how its binaries were
built. The machine should be otherwise idle.
"""
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_serve import UNIQUE, cpu_seconds, start_badge, stop  # noqa: E402

GENERATE_ROUNDS = 21
BATCH_ROUNDS = 5
SERVE_ROUNDS = 3


def timed(argv, env):
    """Wall and CPU (user + system) milliseconds of one whole run of `argv`."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_tricks: {' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def renders(binary, env, script):
    """Uncached renders a second, and the server's CPU milliseconds a render
    (which holds better than the rate when the machine is shared)."""
    server, port = start_badge(binary, env, ["--queue", "64"])
    try:
        before = cpu_seconds([server.pid])
        out = subprocess.run(["wrk", "-t1", "-c8", "-d6s", "-s", script, f"http://127.0.0.1:{port}/"],
                             capture_output=True, text=True, check=True).stdout
        cpu = cpu_seconds([server.pid]) - before
    finally:
        stop(server)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    count = re.search(r"(\d+) requests in", out)
    if not rate or not count:
        sys.exit(f"bench_tricks: wrk printed no rate:\n{out}")
    return float(rate.group(1)), cpu * 1000 / max(int(count.group(1)), 1)


def main():
    binaries = []
    for argument in sys.argv[1:]:
        label, _, path = argument.partition("=")
        if not path or not os.access(path, os.X_OK):
            sys.exit(f"bench_tricks: {argument!r} is not LABEL=BINARY with an executable BINARY")
        binaries.append((label, os.path.abspath(path)))
    if len(binaries) < 2:
        sys.exit(__doc__)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 8192), hard), hard))

    with tempfile.TemporaryDirectory(prefix="badge-tricks-") as work:
        env = dict(os.environ, BADGE_STORE=os.path.join(work, "store"), XDG_CONFIG_HOME=work)
        jobs = os.path.join(work, "jobs.jsonl")
        with open(jobs, "w") as f:
            for i in range(200):
                f.write(json.dumps({"name": f"p{i}", "prompt": f"Promise number {i}", "size": 512}) + "\n")
        script = os.path.join(work, "unique.lua")
        with open(script, "w") as f:
            f.write(UNIQUE)

        figures = {label: {"wall": [], "cpu": [], "batch": [], "batch cpu": [], "renders": [], "render cpu": []}
                   for label, _ in binaries}
        generate = ["generate", "--backend", "procedural", "--size", "1024", "--seed", "1",
                    "--output", os.path.join(work, "badge.png"), "A pair of dumbbells"]
        for _ in range(3):
            for _, binary in binaries:
                timed([binary] + generate, env)
        for _ in range(GENERATE_ROUNDS):
            for label, binary in binaries:
                wall, cpu = timed([binary] + generate, env)
                figures[label]["wall"].append(wall)
                figures[label]["cpu"].append(cpu)
        for k in range(BATCH_ROUNDS):
            for label, binary in binaries:
                out = os.path.join(work, f"batch-{label}-{k}")
                wall, cpu = timed([binary, "batch", jobs, "--output", out], env)
                figures[label]["batch"].append(wall)
                figures[label]["batch cpu"].append(cpu)
        for _ in range(SERVE_ROUNDS):
            for label, binary in binaries:
                rate, cpu = renders(binary, env, script)
                figures[label]["renders"].append(rate)
                figures[label]["render cpu"].append(cpu)

    columns = [("generate 1024 px", "wall", "ms"), ("its CPU", "cpu", "ms"), ("batch 200 x 512", "batch", "ms"),
               ("its CPU", "batch cpu", "ms"), ("serve renders", "renders", "/s"), ("CPU a render", "render cpu", "ms")]
    reference = {key: statistics.median(figures[binaries[0][0]][key]) for _, key, _ in columns}
    print(f"{'binary':22}" + "".join(f"{title:>22}" for title, _, _ in columns))
    for label, _ in binaries:
        cells = []
        for _, key, unit in columns:
            value = statistics.median(figures[label][key])
            change = "" if label == binaries[0][0] else f" {100 * (value / reference[key] - 1):+5.1f} %"
            cells.append(f"{value:.1f} {unit}{change}")
        print(f"{label:22}" + "".join(f"{cell:>22}" for cell in cells))
    print("(for times, + is slower; for the rate of renders, + is faster)")


if __name__ == "__main__":
    main()
