"""An HTTPS server for the tests of a private CA (caFile): listens on
127.0.0.1 on a free port with Tests/Data/tls/server.pem (signed by the test
CA, ca.pem), prints the port on its first line, answers GET /ok with "ok",
and serves until stdin closes."""
import http.server
import os
import ssl
import sys
import threading

TLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Data", "tls")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok" if self.path == "/ok" else b"not found"
        self.send_response(200 if self.path == "/ok" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(TLS, "server.pem"), os.path.join(TLS, "server.key"))
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
