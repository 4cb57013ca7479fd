"""A loopback OpenTelemetry collector: what dm_cc's telemetry sends, received and decoded.

    with http_collector() as collector:          # OTLP/HTTP: POST /v1/logs, /v1/traces
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.endpoint
        ...
        records = collector.wait_for(3)          # each a Received log record
    with grpc_collector() as collector:          # OTLP/gRPC: LogsService/Export

Bodies are decoded with opentelemetry-proto's generated classes, as a real collector
would; an attribute's value comes back as Python (str, int, float, bool, list).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass(frozen=True)
class Received:
    """One log record as the collector got it."""

    body: Any
    event_name: str
    severity: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def value(any_value: AnyValue) -> Any:
    """An OTLP AnyValue as Python."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in any_value.kvlist_value.values}
    return getattr(any_value, kind)


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in pairs}


class Collector:
    """What arrived (:attr:`records`, :attr:`spans`, :attr:`requests`), safe across threads."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.records: list[Received] = []
        self.spans: list[Any] = []
        self.requests = 0
        self._lock = threading.Condition()

    def take(self, request: logs_service_pb2.ExportLogsServiceRequest,
             headers: dict[str, str]) -> None:
        received = [Received(value(record.body), record.event_name, record.severity_text,
                             _attributes(record.attributes), _attributes(resource.resource.attributes),
                             headers)
                    for resource in request.resource_logs
                    for scope in resource.scope_logs for record in scope.log_records]
        with self._lock:
            self.requests += 1
            self.records.extend(received)
            self._lock.notify_all()

    def take_spans(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        with self._lock:
            self.requests += 1
            self.spans.extend(span for resource in request.resource_spans
                              for scope in resource.scope_spans for span in scope.spans)
            self._lock.notify_all()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """The records once at least ``count`` arrived (AssertionError after ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.records) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.records)} records arrived, not {count}"
                self._lock.wait(left)
            return list(self.records)


def free_port() -> int:
    """A loopback port nothing listens on (a collector that is down)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_collector(port: int = 0) -> Iterator[Collector]:
    """An OTLP/HTTP (protobuf) collector on 127.0.0.1 (``port``: 0 for any);
    :attr:`Collector.endpoint` is its base URL (``OTEL_EXPORTER_OTLP_ENDPOINT``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/v1/logs":
                request = logs_service_pb2.ExportLogsServiceRequest.FromString(body)
                collector.take(request, {k.lower(): v for k, v in self.headers.items()})
                reply = logs_service_pb2.ExportLogsServiceResponse().SerializeToString()
            elif self.path == "/v1/traces":
                collector.take_spans(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
                reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    collector = Collector(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield collector
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def grpc_collector(port: int = 0) -> Iterator[Collector]:
    """An OTLP/gRPC collector (LogsService/Export) on 127.0.0.1; :attr:`Collector.endpoint`
    is ``http://127.0.0.1:PORT`` (plain text, as ``http://`` tells the exporter)."""
    import grpc

    class Logs(logs_service_pb2_grpc.LogsServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:  # noqa: N802
            collector.take(request, {k: v for k, v in context.invocation_metadata()})
            return logs_service_pb2.ExportLogsServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    collector = Collector(f"http://127.0.0.1:{bound}")
    server.start()
    try:
        yield collector
    finally:
        server.stop(grace=None)
