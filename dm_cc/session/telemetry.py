"""Every permission decision, sent to an OpenTelemetry collector (docs/telemetry.md).

    config = telemetry_config(settings, env)     # None: not configured, nothing is sent
    exporter = DecisionExporter.start(config)    # imports the OpenTelemetry SDK, now only
    notice = exporter(record)     # one audit record (core/audit.py); never blocks nor raises
    summary = exporter.close()    # within CLOSE_SECONDS; what was not delivered, if any

Each decision is one OTLP **log record** (an event) named ``dm_cc.tool_decision``, not
a span: a decision is a moment, not an operation with a duration, and Claude Code
(``claude_code.tool_decision``) and Codex (``codex.tool_decision``) export theirs as
log records too -- one collector pipeline, and one dashboard, serve the three. The
attributes they share keep their names and Claude Code's values (:func:`attributes`).

The exporter is a listener of the audit path (``Runtime.decisions``): the record the
audit log keeps is the one sent, built once. A collector that is down or slow never
holds a session up: records go to the SDK's bounded queue (``OTEL_BLRP_MAX_QUEUE_SIZE``,
2048) and a background thread sends them; a full queue drops the oldest, a failed
export drops its batch, and every record not delivered is counted -- told once as
a notice when the collector stops answering (and when it answers again), and at
the end of the session. Closing waits at most :data:`CLOSE_SECONDS` (nothing when
the collector is known to be down), never the exporter's 30 s default.

A call's input (a command line can hold a token) is sent only when
``telemetry_input`` says so, as Claude Code sends tool input only with
``OTEL_LOG_TOOL_DETAILS=1``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
    from opentelemetry.sdk._logs.export import (
        BatchLogRecordProcessor,
        LogRecordExporter,
        LogRecordExportResult,
    )

    from dm_cc.config import Settings

logger = logging.getLogger(__name__)

EVENT = "dm_cc.tool_decision"
SERVICE = "dm_cc"
PROTOCOLS = ("grpc", "http/protobuf")
EXPORT_SECONDS = 3.0     # one export, retries included, unless OTEL_EXPORTER_OTLP_*TIMEOUT says
CLOSE_SECONDS = 1.0      # what the end of a session waits for queued records at most
DOWN_CLOSE_SECONDS = 0.2  # ... when the last export failed: they would fail too

#: dm_cc's ``decided_by`` as Claude Code's ``source`` of a ``tool_decision``.
SOURCES = {
    "rule": "config",
    "headless_default": "config",
    "hook": "hook",
    "saved_approval": "user_permanent",
    "person_always": "user_permanent",
    "session_approval": "user_temporary",
    "person_session": "user_temporary",
    "person_once": "user_temporary",
    "person_reject": "user_reject",
    "person_cancel": "user_abort",
    "cancelled": "user_abort",
}


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    """Where and how decisions are sent: ``protocol`` grpc or http/protobuf;
    ``endpoint`` the exporter's own (None: the SDK reads the ``OTEL_*`` variables);
    ``shown`` the endpoint as said to the person (no credentials); ``timeout`` one
    export's (None: the variables say); ``with_input`` each call's input too."""

    protocol: str
    endpoint: str | None
    shown: str
    timeout: float | None
    with_input: bool


def telemetry_config(settings: Settings, env: Mapping[str, str]) -> TelemetryConfig | None:
    """What the settings (``telemetry*`` keys) and the standard variables say; None when
    nothing is to be sent: ``telemetry`` is not ``otlp``, or ``OTEL_SDK_DISABLED=true``
    or ``OTEL_LOGS_EXPORTER=none`` turn it off. ValueError for a protocol the
    exporters do not speak (http/json)."""
    if settings.telemetry != "otlp" or env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if env.get("OTEL_LOGS_EXPORTER", "").strip().lower() == "none":
        return None
    protocol = (settings.telemetry_protocol or _variable(env, "PROTOCOL") or "http/protobuf").strip()
    if protocol not in PROTOCOLS:
        raise ValueError(f"OTLP protocol {protocol!r} is not supported: grpc or http/protobuf")
    http = protocol == "http/protobuf"
    endpoint = None
    if settings.telemetry_endpoint:
        base = settings.telemetry_endpoint.strip()
        endpoint = base.rstrip("/") + "/v1/logs" if http else base
    logs = env.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "").strip()
    common = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    shown = endpoint or logs or (common.rstrip("/") + "/v1/logs" if http and common else common) \
        or ("http://localhost:4318/v1/logs" if http else "localhost:4317")
    timeout = None if _variable(env, "TIMEOUT") else EXPORT_SECONDS
    return TelemetryConfig(protocol, endpoint, _without_credentials(shown), timeout,
                           settings.telemetry_input)


def _variable(env: Mapping[str, str], name: str) -> str | None:
    """``OTEL_EXPORTER_OTLP_LOGS_<name>``, else ``OTEL_EXPORTER_OTLP_<name>`` (set, not empty)."""
    return env.get(f"OTEL_EXPORTER_OTLP_LOGS_{name}") or env.get(f"OTEL_EXPORTER_OTLP_{name}") or None


def _without_credentials(url: str) -> str:
    """``url`` without a user:password and a query (where a token may ride)."""
    parts = urlsplit(url)
    if not parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]       # [::1]:4318 keeps its brackets
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


# --------------------------------------------------------------------------- the record


def attributes(record: Mapping[str, Any], *, with_input: bool = False) -> dict[str, Any]:
    """An audit record as the log record's attributes. Those Claude Code and Codex share
    keep their names (``tool_name``, ``decision``, ``source``; ``session.id`` as Claude
    Code, ``call_id`` as Codex) and Claude Code's values (``decision`` accept|reject:
    the call ran or not; ``source`` from :data:`SOURCES`); dm_cc's own are ``dm_cc.*``.
    The deciding rule is named by ``file:line`` and layer; its pattern, the requests'
    patterns, the input and the person's feedback only ``with_input`` -- any of them
    may be (part of) a command line, which can hold a secret."""
    requests: Sequence[Mapping[str, Any]] = record.get("requests") or ()
    deciding = next((r for r in requests if r.get("decision") == record.get("gate")),
                    requests[0] if requests else None)
    decided_by = str(record.get("decided_by", ""))
    values: dict[str, Any] = {
        "event.name": EVENT,
        "event.timestamp": record.get("time"),
        "session.id": record.get("session"),
        "tool_name": record.get("tool"),
        "call_id": record.get("call_id"),
        "decision": "accept" if record.get("decision") == "allow" else "reject",
        "source": SOURCES.get(decided_by, "config"),
        "dm_cc.decision": record.get("decision"),
        "dm_cc.gate": record.get("gate"),
        "dm_cc.decided_by": decided_by,
        "dm_cc.answer": record.get("answer"),
        "dm_cc.agent": record.get("agent"),
        "dm_cc.subagent": record.get("subagent") or None,
        "dm_cc.root_session.id": record.get("root_session"),
        "dm_cc.project": record.get("project"),
        "dm_cc.request.permissions": [str(r.get("permission")) for r in requests],
        "dm_cc.request.decisions": [str(r.get("decision")) for r in requests],
        "dm_cc.request.sources": [str(r.get("source")) for r in requests],
        "dm_cc.request.layers": [str(r.get("layer")) for r in requests],
    }
    if deciding is not None:
        rule = deciding.get("rule") or {}
        values.update({"dm_cc.rule.source": deciding.get("source"),
                       "dm_cc.rule.layer": deciding.get("layer"),
                       "dm_cc.rule.action": rule.get("action"),
                       "dm_cc.rule.permission": rule.get("permission"),
                       "dm_cc.rule.reason": deciding.get("reason")})
        if with_input:
            values["dm_cc.rule.pattern"] = rule.get("pattern")
    if with_input:
        values.update({"tool_input": record.get("input"),
                       "dm_cc.request.patterns": [str(r.get("pattern")) for r in requests],
                       "dm_cc.feedback": record.get("feedback")})
    return {key: value for key, value in values.items() if value is not None}


# --------------------------------------------------------------------------- the exporter


class _Tally:
    """What the background thread delivered and failed to, and whether the last
    export failed (the collector is down); read and written under its lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.delivered = 0
        self.failed = 0
        self.down = False


class DecisionExporter:
    """Decisions to a collector over OTLP: see the module docstring. ``__call__`` is
    the audit path's listener (``Runtime.decisions``)."""

    def __init__(self, config: TelemetryConfig, provider: LoggerProvider,
                 processor: BatchLogRecordProcessor, tally: _Tally) -> None:
        self.config = config
        self._provider = provider
        self._processor = processor
        self._logger = provider.get_logger("dm_cc.decisions")
        self._tally = tally
        self.emitted = 0
        self._told_down = False
        self._closed = False

    @classmethod
    def start(cls, config: TelemetryConfig) -> DecisionExporter:
        """The exporter ``config`` describes, its background thread started (the SDK and
        the protocol's exporter imported now: never on a command that sends nothing)."""
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

        _quiet_sdk()
        tally = _Tally()
        counted = cast("LogRecordExporter", _Counted(_otlp_exporter(config), tally))
        processor = BatchLogRecordProcessor(counted)
        # shutdown_on_exit=False: the SDK's atexit shutdown waits up to 30 s; close() does not
        provider = LoggerProvider(resource=_resource(), shutdown_on_exit=False)
        provider.add_log_record_processor(processor)
        logger.debug("telemetry: decisions to %s over %s", config.shown, config.protocol)
        return cls(config, provider, processor, tally)

    def __call__(self, record: dict[str, Any]) -> str | None:
        """Queue ``record`` (never waits on the network, never raises); a notice when
        the collector stopped answering since the last one, or answers again."""
        if self._closed:
            return None
        self.emitted += 1
        try:
            from opentelemetry._logs import SeverityNumber

            self._logger.emit(body=EVENT, event_name=EVENT, severity_number=SeverityNumber.INFO,
                              severity_text="INFO",
                              attributes=attributes(record, with_input=self.config.with_input))
        except Exception as exc:  # noqa: BLE001 -- telemetry never stops a session
            logger.info("telemetry: a decision was not queued: %s", exc)
        return self._news()

    def _news(self) -> str | None:
        with self._tally.lock:
            down, failed = self._tally.down, self._tally.failed
        where = self.config.shown
        if down and not self._told_down:
            self._told_down = True
            logger.info("telemetry: the collector at %s does not answer", where)
            return (f"telemetry: decisions are not reaching the collector at {where}; they are "
                    "counted and dropped until it answers (the session goes on)")
        if not down and self._told_down:
            self._told_down = False
            return (f"telemetry: the collector at {where} answers again; {_decisions(failed)} "
                    "were not delivered so far")
        return None

    @property
    def undelivered(self) -> int:
        """Decisions queued and not (yet) delivered: dropped, failed or still waiting."""
        with self._tally.lock:
            return self.emitted - self._tally.delivered

    def close(self) -> str | None:
        """Send what is queued, waiting at most :data:`CLOSE_SECONDS` (hardly at all when
        the collector is down), then stop; what was not delivered, said once."""
        if self._closed:
            return None
        self._closed = True
        with self._tally.lock:
            down = self._tally.down
        wait = DOWN_CLOSE_SECONDS if down else CLOSE_SECONDS

        def shut() -> None:
            try:
                self._processor.shutdown()   # waits up to 30 s: bounded by the join below
            except Exception as exc:  # noqa: BLE001
                logger.info("telemetry: closing: %s", exc)

        closing = threading.Thread(target=shut, name="dm_cc-telemetry-close", daemon=True)
        closing.start()
        closing.join(wait)   # what is still queued or sending then is not delivered
        lost = self.undelivered
        logger.info("telemetry: %d of %d decisions delivered to %s", self.emitted - lost,
                    self.emitted, self.config.shown)
        if not lost:
            return None
        return (f"telemetry: {lost} of {_decisions(self.emitted)} not delivered to the "
                f"collector at {self.config.shown}")


def _decisions(count: int) -> str:
    return f"{count} decision{'' if count == 1 else 's'}"


def _quiet_sdk() -> None:
    """The SDK's complaints (a failed export, a full queue) go to the debug log when
    there is one (``--verbose``), never to the terminal: unhandled, Python would print
    them over the REPL."""
    sdk = logging.getLogger("opentelemetry")
    if not any(isinstance(h, _ToDebugLog) for h in sdk.handlers):
        sdk.addHandler(_ToDebugLog())
        sdk.propagate = False


class _ToDebugLog(logging.Handler):
    """Hands a record of the SDK's to dm_cc's debug log, if one is being written."""

    def emit(self, record: logging.LogRecord) -> None:
        if logger.isEnabledFor(logging.DEBUG) and logging.getLogger("dm_cc").handlers:
            logger.handle(record)


def _resource() -> Any:
    """``service.name`` dm_cc and its version, unless ``OTEL_SERVICE_NAME`` or
    ``OTEL_RESOURCE_ATTRIBUTES`` say otherwise (they win), with the SDK's own."""
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource

    from dm_cc import __version__

    own = Resource({"service.name": SERVICE, "service.version": __version__})
    return Resource.create(dict(own.merge(OTELResourceDetector().detect()).attributes))


def _otlp_exporter(config: TelemetryConfig) -> Any:
    """The protocol's OTLP log exporter (its other settings, such as headers and
    certificates, from the ``OTEL_EXPORTER_OTLP_*`` variables, as the SDK reads them)."""
    if config.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter

        return OTLPLogExporter(endpoint=config.endpoint, timeout=config.timeout)
    from opentelemetry.exporter.otlp.proto.http._log_exporter import (
        OTLPLogExporter as HTTPLogExporter,
    )

    return HTTPLogExporter(endpoint=config.endpoint, timeout=config.timeout)


class _Counted:
    """An exporter that counts, in a :class:`_Tally`, the records delivered and those
    failed (an exception is a failure too: the SDK would only log it)."""

    def __init__(self, exporter: Any, tally: _Tally) -> None:
        self._exporter = exporter
        self._tally = tally

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        from opentelemetry.sdk._logs.export import LogRecordExportResult

        try:
            result = self._exporter.export(batch)
        except Exception as exc:  # noqa: BLE001
            logger.info("telemetry: export failed: %s", exc)
            result = LogRecordExportResult.FAILURE
        with self._tally.lock:
            if result == LogRecordExportResult.SUCCESS:
                self._tally.delivered += len(batch)
                self._tally.down = False
            else:
                self._tally.failed += len(batch)
                self._tally.down = True
        return result

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self._exporter.force_flush(timeout_millis))

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        if "timeout_millis" in _parameters(self._exporter.shutdown):
            self._exporter.shutdown(timeout_millis=timeout_millis)
        else:
            self._exporter.shutdown()


def _parameters(function: Any) -> tuple[str, ...]:
    import inspect

    return tuple(inspect.signature(function).parameters)
