#!/usr/bin/env python3
"""The image model that make check-package's installed badge talks to: OpenAI's
POST /v1/images/generations, answered with one PNG. Runs outside the chroot on
127.0.0.1 (a chroot shares the network), at a free port it prints, until its
standard input closes; every request it receives is written, one line each, to
the file it is given, so the check can tell that badge's libcurl reached it.
Only the standard library: it runs wherever the check runs.
    scripts/check-package-server.py REQUESTS-FILE"""
import base64
import json
import struct
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def png(side=64, rgb=(40, 120, 200)):
    raw = b"".join(b"\x00" + bytes(rgb) * side for _ in range(side))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


ANSWER = json.dumps({"created": 1, "data": [{"b64_json": base64.b64encode(png()).decode()}]}).encode()
log = open(sys.argv[1], "a", buffering=1)
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            prompt = json.loads(body).get("prompt")
        except (ValueError, AttributeError):
            prompt = None
        with lock:
            log.write(json.dumps({"path": self.path, "prompt": prompt, "user_agent": self.headers.get("User-Agent")}) + "\n")
        status, answer = (200, ANSWER) if self.path == "/v1/images/generations" else (404, b'{"error": "no such path"}')
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
