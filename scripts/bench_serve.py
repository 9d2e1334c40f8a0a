"""`badge serve` under wrk, for scripts/bench.py (make bench; BENCH_ONLY=serve alone).

Five figures, each from wrk on loopback in the same run:
- a cached badge answered 200 (the PNG) and 304 (If-None-Match), requests a
  second, against nginx serving the same PNG file (budget: at least 0.5x nginx);
- the floor under those: the same PNG, its ETag and headers from a bare
  Hummingbird router (`BadgeBench hummingbird`: one route, no middleware), the
  rate badge serve's stack allows before badge's own work;
- uncached 256 px renders a second on every core, against the same pinned to
  one core, each with the render slots `badge serve` takes by default (the
  cores plus one) (budget: at least 1.7x);
- p50 and p99 latency and the server's peak RSS with 1,000 open connections;
- uncached 256 px SVG renders a second against uncached PNG ones, on every
  core (goal: at least 5x).
"""
import os
import re
import resource
import shutil
import subprocess
import time
import urllib.request

DURATION = "8s"
QUERY = "/v1/badge.png?promise=Run+a+marathon&style=medal&seed=7&size=256"
UNIQUE = """
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/v1/badge.png?size=256&seed=1&promise=Promise+" .. counter .. "+" .. math.random(1, 1000000000))
end
"""
UNIQUE_SVG = UNIQUE.replace("/v1/badge.png", "/v1/badge.svg")


def start_badge(badge, env, arguments, prefix=()):
    process = subprocess.Popen(list(prefix) + [badge, "serve", "--listen", "127.0.0.1:0", "--render-only"] + arguments,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        process.kill()
        raise SystemExit(f"bench: badge serve did not start: {line!r}")
    return process, int(match.group(1))


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pids):
    """User and system CPU time of the processes, in seconds."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def family(pid):
    """The process and its children (nginx's workers)."""
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [pid] + [int(child) for child in out]


def cpu_per_request(url, pids, headers=()):
    """wrk's rate, and the server's CPU time a request in microseconds: the
    second figure holds when other work shares the cores, the rate does not."""
    before = cpu_seconds(pids)
    rate, _, _, _, count = wrk(url, headers=headers, count=True)
    return rate, (cpu_seconds(pids) - before) / max(count, 1) * 1e6


def wrk(url, threads=2, connections=64, headers=(), script=None, latency=False, count=False):
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{DURATION}"]
    for header in headers:
        argv += ["-H", header]
    if script:
        argv += ["-s", script]
    if latency:
        argv.append("--latency")
    out = subprocess.run(argv + [url], capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    percentiles = {}
    for p, value, unit in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M):
        percentiles[p] = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    result = (rate, int(errors.group(1)) if errors else 0, percentiles, socket_errors.group(1) if socket_errors else None)
    return result + (int(re.search(r"(\d+) requests in", out).group(1)),) if count else result


def head(url, headers=None):
    request = urllib.request.Request(url, method="GET", headers=headers or {})
    with urllib.request.urlopen(request) as answer:
        return answer.headers, answer.read()


def start_nginx(work, png):
    root = os.path.join(work, "nginx")
    www = os.path.join(root, "www")
    os.makedirs(www, exist_ok=True)
    with open(os.path.join(www, "badge.png"), "wb") as f:
        f.write(png)
    conf = os.path.join(root, "nginx.conf")
    user = "user root;\n" if os.getuid() == 0 else ""
    with open(conf, "w") as f:
        f.write(f"""{user}worker_processes 2;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log /dev/null;
  client_body_temp_path {root}/body; proxy_temp_path {root}/proxy; fastcgi_temp_path {root}/fcgi;
  uwsgi_temp_path {root}/uwsgi; scgi_temp_path {root}/scgi;
  types {{ image/png png; }}
  server {{ listen 127.0.0.1:0; root {www}; }}
}}
""")
    # nginx cannot listen on port 0 and report it: find a free port first.
    import socket
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with open(conf) as f:
        text = f.read().replace("listen 127.0.0.1:0;", f"listen 127.0.0.1:{port};")
    with open(conf, "w") as f:
        f.write(text)
    process = subprocess.Popen(["nginx", "-p", root, "-c", conf, "-e", os.path.join(root, "error.log")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            head(f"http://127.0.0.1:{port}/badge.png")
            return process, port
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("bench: nginx did not start")


def start_floor(bench, work, png):
    """`BadgeBench hummingbird`: the PNG from a bare Hummingbird router."""
    path = os.path.join(work, "floor.png")
    with open(path, "wb") as f:
        f.write(png)
    process = subprocess.Popen([bench, "hummingbird", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    if not line.startswith("http://"):
        process.kill()
        raise SystemExit(f"bench: BadgeBench hummingbird did not start: {line!r}")
    return process, line.strip()


def bench_serve(rows, extra, work, env, badge, bench=None):
    """Adds the rows and lines; returns [(budget, met)]. With `bench` (the
    BadgeBench binary), also Hummingbird's floor."""
    if not shutil.which("wrk") or not shutil.which("nginx"):
        extra.append("serve: wrk or nginx is missing (scripts/install-deps.sh --with-bench installs them); not measured")
        return []
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 8192), hard), hard))

    server, port = start_badge(badge, env, ["--concurrency", "2", "--queue", "64"])
    nginx, nginx_port = start_nginx(work, head(f"http://127.0.0.1:{port}{QUERY}")[1])
    try:
        ours_url, nginx_url = f"http://127.0.0.1:{port}{QUERY}", f"http://127.0.0.1:{nginx_port}/badge.png"
        etag = head(ours_url)[0]["ETag"]
        nginx_etag = head(nginx_url)[0]["ETag"]
        nginx_pids = family(nginx.pid)
        ok, ok_cpu = cpu_per_request(ours_url, [server.pid])
        ok_nginx, ok_nginx_cpu = cpu_per_request(nginx_url, nginx_pids)
        rows.append(("serve: cached badge, 200 (>= 0.5x nginx)", 1000.0 / ok, 1000.0 / ok, "nginx file", 1000.0 / ok_nginx, 1000.0 / ok_nginx))
        not_modified, not_modified_cpu = cpu_per_request(ours_url, [server.pid], headers=[f"If-None-Match: {etag}"])
        not_modified_nginx, not_modified_nginx_cpu = cpu_per_request(nginx_url, nginx_pids, headers=[f"If-None-Match: {nginx_etag}"])
        rows.append(("serve: cached badge, 304", 1000.0 / not_modified, 1000.0 / not_modified, "nginx file",
                     1000.0 / not_modified_nginx, 1000.0 / not_modified_nginx))
        extra.append(f"serve, cached 256 px badge, wrk 2 threads x 64 connections: 200 {ok:.0f}/s (nginx {ok_nginx:.0f}/s, "
                     f"{ok / ok_nginx:.2f}x); 304 {not_modified:.0f}/s (nginx {not_modified_nginx:.0f}/s, {not_modified / not_modified_nginx:.2f}x)")
        extra.append(f"serve, the server's CPU a request: 200 {ok_cpu:.1f} us (nginx {ok_nginx_cpu:.1f} us), "
                     f"304 {not_modified_cpu:.1f} us (nginx {not_modified_nginx_cpu:.1f} us)")
        if bench and os.path.exists(bench):
            floor, floor_url = start_floor(bench, work, head(ours_url)[1])
            try:
                floor_etag = head(floor_url)[0]["ETag"]
                floor_ok, floor_ok_cpu = cpu_per_request(floor_url, [floor.pid])
                floor_not_modified, floor_not_modified_cpu = cpu_per_request(floor_url, [floor.pid], headers=[f"If-None-Match: {floor_etag}"])
            finally:
                stop(floor)
            extra.append(f"serve, Hummingbird's floor (the same PNG from one bare route): 200 {floor_ok:.0f}/s "
                         f"({floor_ok / ok_nginx:.2f}x nginx), 304 {floor_not_modified:.0f}/s ({floor_not_modified / not_modified_nginx:.2f}x nginx); "
                         f"badge serve answers at {ok / floor_ok:.2f}x and {not_modified / floor_not_modified:.2f}x of it; "
                         f"the floor's CPU a request: 200 {floor_ok_cpu:.1f} us, 304 {floor_not_modified_cpu:.1f} us")

        # 1,000 open connections on the cached badge.
        busy, _, percentiles, socket_errors = wrk(ours_url, threads=2, connections=1000, latency=True)
        rss = peak_rss_mb(server.pid)
        extra.append(f"serve, 1,000 connections on the cached badge: {busy:.0f}/s, p50 {percentiles.get('50', 0):.1f} ms, "
                     f"p99 {percentiles.get('99', 0):.1f} ms, peak RSS {rss:.0f} MB (socket errors: {socket_errors or 'none'})")
    finally:
        stop(server)
        nginx.terminate()
        nginx.wait()

    # Uncached renders: every request a new promise.
    script = os.path.join(work, "unique.lua")
    with open(script, "w") as f:
        f.write(UNIQUE)
    rates = {}
    for name, arguments, prefix in (("all cores", ["--queue", "64"], ()),
                                    ("1 core", ["--queue", "64"], ("taskset", "-c", "0"))):
        server, port = start_badge(badge, env, arguments, prefix)
        try:
            rate, refused, _, _ = wrk(f"http://127.0.0.1:{port}/", threads=1, connections=8, script=script)
            rss = peak_rss_mb(server.pid)
        finally:
            stop(server)
        rates[name] = (rate, refused, rss)
    svg_script = os.path.join(work, "unique-svg.lua")
    with open(svg_script, "w") as f:
        f.write(UNIQUE_SVG)
    server, port = start_badge(badge, env, ["--queue", "64"])
    try:
        svg_rate, svg_refused, _, _ = wrk(f"http://127.0.0.1:{port}/", threads=1, connections=8, script=svg_script)
    finally:
        stop(server)
    two, one = rates["all cores"][0], rates["1 core"][0]
    rows.append(("serve: uncached 256 px render (>= 1.7x 1 core)", 1000.0 / two, 1000.0 / two, "1 core", 1000.0 / one, 1000.0 / one))
    cores = len(os.sched_getaffinity(0))
    extra.append(f"serve, uncached 256 px renders: {two:.1f}/s on {cores} cores with {cores + 1} slots, "
                 f"{one:.1f}/s on 1 core with 2 ({two / one:.2f}x); peak RSS {rates['all cores'][2]:.0f} MB; "
                 f"503s {rates['all cores'][1]} and {rates['1 core'][1]}")
    extra.append(f"serve, uncached 256 px SVG renders: {svg_rate:.1f}/s against PNG {two:.1f}/s = {svg_rate / two:.2f}x "
                 f"(goal >= 5x); 503s {svg_refused}")
    return [("serve 200 >= 0.5x nginx", ok >= 0.5 * ok_nginx), ("serve renders >= 1.7x 1 core", two >= 1.7 * one),
            ("serve SVG renders >= 5x PNG", svg_rate >= 5 * two)]
