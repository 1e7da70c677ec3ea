#!/usr/bin/env python3
"""An OTLP/HTTP trace receiver for the tests: decodes each POST to /v1/traces with the official
OpenTelemetry protobuf definitions (PyPI opentelemetry-proto) and appends one JSON line per span
to a file.

    otlp-receiver.py OUT.jsonl [--hang | --status CODE]

It says "listening on port N" (127.0.0.1) on stderr once it listens. --hang: accept
connections and never answer (a collector that is stuck); --status CODE: answer every export
with that status (a collector that fails).
"""

import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes_of(key_values):
    return {kv.key: value_of(kv.value) for kv in key_values}


def spans_of(body):
    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(body)
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield {
                    "resource": resource,
                    "scope": scope_spans.scope.name,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "trace_state": span.trace_state,
                    "name": span.name,
                    "kind": trace_pb2.Span.SpanKind.Name(span.kind),
                    "start": span.start_time_unix_nano,
                    "end": span.end_time_unix_nano,
                    "attributes": attributes_of(span.attributes),
                    "status": trace_pb2.Status.StatusCode.Name(span.status.code),
                    "status_message": span.status.message,
                }


def main():
    out = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else None
    lock = threading.Lock()

    if mode == "--hang":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        print(f"listening on port {listener.getsockname()[1]}", file=sys.stderr, flush=True)
        held = []
        while True:
            connection, _ = listener.accept()
            held.append(connection)  # never read, never answered

    status = int(sys.argv[3]) if mode == "--status" else 200

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if status == 200:
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                if self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_response(415)
                    self.end_headers()
                    return
                lines = [json.dumps(span) for span in spans_of(body)]
                with lock, open(out, "a", encoding="utf-8") as file:
                    for line in lines:
                        file.write(line + "\n")
            self.send_response(status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on port {server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
