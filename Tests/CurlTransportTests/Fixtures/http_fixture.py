"""A scripted HTTP server for CurlTransport's tests. Listens on 127.0.0.1 on a
free port, prints the port on its first line, and serves until stdin closes
(so it never outlives the test that started it)."""
import http.server
import sys
import threading
import time
from urllib.parse import parse_qs, urlparse

arrived = threading.Condition()
barrier = {"count": 0}
# How many /stall answers have begun (their headers and first bytes sent): GET /stalled.
stalls = {"count": 0}
# How many /drop requests have arrived: GET /dropped.
drops = {"count": 0}
# For each POST /drop-if-reused, which request of its connection it was (1: the first): GET /reused-posts.
reused_posts = []


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without this, Nagle's algorithm
    # and the client's delayed ACK add 40 ms to every keep-alive response.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def parse_request(self):
        # Counts the requests of this connection (a handler serves one connection).
        self.on_connection = getattr(self, "on_connection", 0) + 1
        return super().parse_request()

    def send_body(self, status, body, headers=()):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path == "/drop-if-reused":
            # Acted on, then, on a connection that served a request before, closed with
            # no answer: what a server that timed out an idle keep-alive connection does.
            with arrived:
                reused_posts.append(self.on_connection)
            if self.on_connection > 1:
                self.close_connection = True
                return
        auth = self.headers.get("Authorization", "")
        self.send_body(200, body, [("X-Auth-Seen", "yes" if auth else "no"), ("X-Method", "POST")])

    def do_GET(self):
        url = urlparse(self.path)
        q = parse_qs(url.query)
        port = self.server.server_address[1]
        if url.path == "/ok":
            self.send_body(200, b"hello", [("X-Test", "fixture"), ("X-User-Agent-Seen", self.headers.get("User-Agent", ""))])
        elif url.path == "/slow-first-byte":
            time.sleep(float(q.get("delay", ["1.5"])[0]))
            self.send_body(200, b"late but whole")
        elif url.path == "/stall":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"x" * 100)
            self.wfile.flush()
            with arrived:
                stalls["count"] += 1
            time.sleep(float(q.get("seconds", ["30"])[0]))
        elif url.path == "/drop":
            # The connection is closed after the request arrived, with nothing written.
            with arrived:
                drops["count"] += 1
            self.close_connection = True
        elif url.path == "/dropped":
            with arrived:
                count = drops["count"]
            self.send_body(200, str(count).encode())
        elif url.path == "/reused-posts":
            with arrived:
                seen = list(reused_posts)
            self.send_body(200, ",".join(map(str, seen)).encode())
        elif url.path == "/connection":
            # Which request of its connection this is.
            self.send_body(200, str(self.on_connection).encode())
        elif url.path == "/stalled":
            with arrived:
                count = stalls["count"]
            self.send_body(200, str(count).encode())
        elif url.path == "/big-chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"y" * 65536
            try:
                for _ in range(int(q.get("chunks", ["128"])[0])):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif url.path == "/not-http":
            # No status line: what a server of another protocol, or of none, sends.
            self.wfile.write(b"garbage not http\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
        elif url.path == "/giant-header":
            self.send_response(200)
            self.send_header("X-Giant", "g" * int(q.get("bytes", ["300000"])[0]))
            self.send_header("Content-Length", "2")
            self.end_headers()
            try:
                self.wfile.write(b"ok")
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif url.path == "/redirect-http":
            self.send_body(302, b"", [("Location", f"http://127.0.0.1:{port}/ok")])
        elif url.path == "/barrier":
            # Answers 200 only once `n` requests are inside at the same moment; a request
            # that waits 30 s without seeing them all answers 504 with how many it saw.
            n = int(q.get("n", ["16"])[0])
            with arrived:
                barrier["count"] += 1
                arrived.notify_all()
                met = arrived.wait_for(lambda: barrier["count"] >= n, timeout=30)
                seen = barrier["count"]
            if met:
                self.send_body(200, b"together")
            else:
                self.send_body(504, f"only {seen} of {n} requests arrived together".encode())
        elif url.path.startswith("/status/"):
            self.send_body(int(url.path.split("/")[2]), b'{"error":"scripted"}', [("Retry-After", "7")])
        else:
            self.send_body(404, b"not found")


# The default listen backlog of 5 drops SYNs when many clients connect at once
# (each dropped one costs a 1 s retransmit).
http.server.ThreadingHTTPServer.request_queue_size = 128
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
