"""A fault-injecting HTTP/1.1 proxy for the remote-scene tests (Python 3 stdlib only).

It forwards GET and HEAD to an upstream server (nginx on loopback) and injects faults chosen by
the request path:

    /fault/<spec>/<path>   forwards /<path> with the faults of <spec>
    /<path>                forwards as is

<spec> is a comma-separated list:

    key=NAME      the counter the faults below count on (default: the spec itself); each
                  request under a key gets the next number n = 0, 1, 2, ...
    after=K       the counted faults apply only from request K on (open() can succeed first)
    drop=N        requests K..K+N-1 get no answer: the connection closes
    reset=N       ... the connection is reset (RST)
    status=C:N    ... get HTTP status C with an empty body
    short=N       ... get the upstream headers (full Content-Length) and half the body, then
                  the connection closes
    hang=N        ... get nothing for 30 s (the client's timeout must end it)
    delay=MS      every request waits MS milliseconds before it is answered (latency)
    norange       every request loses its Range and If-Range headers (a server that ignores
                  ranges answers 200 with the whole body)

Run alone:  python3 fault_proxy.py UPSTREAM_PORT [LISTEN_PORT]
"""

import http.client
import http.server
import socket
import socketserver
import struct
import sys
import threading
import time

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade"}


class Faults:
    def __init__(self, spec):
        self.key = spec
        self.after = 0
        self.counted = []  # (kind, count, arg)
        self.delay_ms = 0
        self.norange = False
        for token in filter(None, spec.split(",")):
            name, _, value = token.partition("=")
            if name == "key":
                self.key = value
            elif name == "after":
                self.after = int(value)
            elif name in ("drop", "reset", "short", "hang"):
                self.counted.append((name, int(value), None))
            elif name == "status":
                code, _, count = value.partition(":")
                self.counted.append(("status", int(count or "1"), int(code)))
            elif name == "delay":
                self.delay_ms = int(value)
            elif name == "norange":
                self.norange = True
            else:
                raise ValueError("unknown fault " + token)

    def pick(self, n):
        """The counted fault for the key's request number n, or None."""
        if n < self.after:
            return None
        for kind, count, arg in self.counted:
            if n < self.after + count:
                return kind, arg
        return None


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.seen = {}

    def next(self, key):
        with self.lock:
            n = self.seen.get(key, 0)
            self.seen[key] = n + 1
            return n


def make_handler(upstream_port, counters):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_HEAD(self):
            self.forward(head=True)

        def do_GET(self):
            self.forward(head=False)

        def forward(self, head):
            path = self.path
            faults = Faults("")
            if path.startswith("/fault/"):
                spec, _, rest = path[len("/fault/"):].partition("/")
                faults = Faults(spec)
                path = "/" + rest
            fault = faults.pick(counters.next(faults.key))
            if faults.delay_ms:
                time.sleep(faults.delay_ms / 1000.0)
            if fault is not None:
                kind, arg = fault
                if kind == "drop":
                    self.close_connection = True
                    return
                if kind == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                if kind == "hang":
                    time.sleep(30)
                    self.close_connection = True
                    return
                if kind == "status":
                    self.send_response(arg)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in HOP_BY_HOP and k.lower() != "host"}
            if faults.norange:
                headers = {k: v for k, v in headers.items()
                           if k.lower() not in ("range", "if-range")}
            upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=30)
            try:
                upstream.request("HEAD" if head else "GET", path, headers=headers)
                resp = upstream.getresponse()
                body = b"" if head else resp.read()
                self.send_response(resp.status, resp.reason)
                for k, v in resp.getheaders():
                    if k.lower() not in HOP_BY_HOP:
                        self.send_header(k, v)
                self.end_headers()
                if fault is not None and fault[0] == "short":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)
            finally:
                upstream.close()

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    block_on_close = False  # a hanging handler must not hold up the harness's exit

    def handle_error(self, request, client_address):
        # Clients hang up on purpose here (timeouts, aborted transfers): not worth a traceback.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)
    allow_reuse_address = True


def start(upstream_port, port=0):
    """Starts the proxy on 127.0.0.1:port (0 = any free port) in a daemon thread; returns the
    server (server.server_address[1] is the port; server.shutdown() stops it)."""
    server = Server(("127.0.0.1", port), make_handler(upstream_port, Counters()))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    srv = start(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print("fault proxy on 127.0.0.1:%d" % srv.server_address[1], flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
