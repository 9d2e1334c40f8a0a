"""What the fake servers share: a small PNG, multipart/form-data parsing, a
JSON-answering request handler, and the serving loop (127.0.0.1, a free port
printed on standard output, served until standard input closes)."""
import base64
import email.parser
import email.policy
import json
import struct
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def png(width=32, height=32, rgb=(200, 40, 90)):
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def multipart(content_type, raw):
    """The fields of a multipart/form-data body: text as str, files as a dict
    (filename, content_type, size, b64). None if it is not multipart."""
    if not content_type.startswith("multipart/form-data"):
        return None
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    fields = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        filename = part.get_filename()
        if filename is None:
            fields[name] = data.decode()
        else:
            fields[name] = {"filename": filename, "content_type": part.get_content_type(), "size": len(data),
                            "b64": base64.b64encode(data).decode()}
    return fields


class JSONHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without this, Nagle's algorithm
    # and the client's delayed ACK add 40 ms to every keep-alive response.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def parse_request(self):
        # Which request of its connection this is (1: the first): a handler serves one connection.
        self.on_connection = getattr(self, "on_connection", 0) + 1
        return super().parse_request()

    def reply(self, status, body, content_type="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


def serve(handler):
    """Serves `handler` on 127.0.0.1 at a free port, which it prints, until
    standard input closes (the test that started it ends)."""
    # The default listen backlog of 5 drops SYNs when many clients connect at once
    # (each dropped one costs a 1 s retransmit).
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    return server
