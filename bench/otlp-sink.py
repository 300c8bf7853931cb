#!/usr/bin/env python3
"""An OTLP/HTTP sink for the benchmark: takes POST /v1/traces (any body) and answers 200, as a collector
does, counting requests and bytes. The service's CPU per request with tracing on is then measured against
a receiver that costs it nothing more than a real collector's acknowledgement would.

    python3 bench/otlp-sink.py PORT
"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests = 0
    received = 0

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        Sink.requests += 1
        Sink.received += length
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink)
    try:
        server.serve_forever()
    finally:
        print(f"otlp-sink: {Sink.requests} exports, {Sink.received} bytes", flush=True)
