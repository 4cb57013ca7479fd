"""Decisions to a collector (dm_cc/session/telemetry.py): the attributes, the
configuration, and the exporter against a loopback OTLP collector that is down, hangs,
and comes up."""

from __future__ import annotations

import socket
import time

import pytest
from support.otlp import free_port, http_collector

from dm_cc.config import Settings
from dm_cc.session import telemetry
from dm_cc.session.telemetry import (
    SOURCES,
    DecisionExporter,
    TelemetryConfig,
    attributes,
    telemetry_config,
)

SECRET = "ghp_0123456789abcdefSECRET"

RECORD = {
    "seq": 3, "time": "2026-11-23T08:01:12.431Z", "project": "/home/me/app",
    "session": "ses_child", "root_session": "ses_root", "agent": "explore",
    "subagent": "explore #2", "tool": "bash", "call_id": "call_5be0",
    "input": f"curl -H 'Authorization: token {SECRET}' https://api.github.com",
    "gate": "deny", "decision": "deny", "decided_by": "rule", "answer": None, "feedback": None,
    "requests": [
        {"permission": "bash", "pattern": f"curl -H Authorization: token {SECRET} https://api.github.com",
         "decision": "allow", "rule": {"action": "allow", "permission": "bash", "pattern": "curl *"},
         "source": ".dm_cc/policy.yaml:4", "reason": None, "layer": "project", "note": None},
        {"permission": "network", "pattern": "api.github.com", "decision": "deny",
         "rule": {"action": "deny", "permission": "network", "pattern": "*.github.com"},
         "source": "~/.config/dm_cc/policy.yaml:9", "reason": "no pushing from here",
         "layer": "user", "note": None},
    ],
    "pid": 4242,
}


def test_a_decision_carries_claude_code_and_codex_names_and_dm_ccs_rule():
    sent = attributes(RECORD)
    assert sent["event.name"] == "dm_cc.tool_decision"
    # the names Claude Code's tool_decision and Codex's codex.tool_decision share
    assert (sent["tool_name"], sent["decision"], sent["source"]) == ("bash", "reject", "config")
    assert (sent["session.id"], sent["call_id"]) == ("ses_child", "call_5be0")
    # dm_cc's own: the deciding rule (the deny, not the allow before it), where and in which layer
    assert sent["dm_cc.rule.source"] == "~/.config/dm_cc/policy.yaml:9"
    assert (sent["dm_cc.rule.layer"], sent["dm_cc.rule.action"]) == ("user", "deny")
    assert sent["dm_cc.rule.reason"] == "no pushing from here"
    assert (sent["dm_cc.agent"], sent["dm_cc.subagent"]) == ("explore", "explore #2")
    assert sent["dm_cc.root_session.id"] == "ses_root"
    assert sent["dm_cc.request.permissions"] == ["bash", "network"]
    assert sent["dm_cc.request.sources"] == [".dm_cc/policy.yaml:4", "~/.config/dm_cc/policy.yaml:9"]
    assert (sent["dm_cc.gate"], sent["dm_cc.decided_by"]) == ("deny", "rule")
    assert "dm_cc.answer" not in sent          # no question was asked: nothing, not null


def test_the_input_and_every_pattern_are_sent_only_when_asked_for():
    by_default = attributes(RECORD)
    assert SECRET not in repr(by_default)
    assert not {"tool_input", "dm_cc.request.patterns", "dm_cc.rule.pattern"} & set(by_default)
    asked = attributes(RECORD, with_input=True)
    assert asked["tool_input"] == RECORD["input"]
    assert SECRET in asked["dm_cc.request.patterns"][0]
    assert asked["dm_cc.rule.pattern"] == "*.github.com"


@pytest.mark.parametrize(("decided_by", "ran", "decision", "source"), [
    ("rule", "allow", "accept", "config"),
    ("saved_approval", "allow", "accept", "user_permanent"),
    ("session_approval", "allow", "accept", "user_temporary"),
    ("person_once", "allow", "accept", "user_temporary"),
    ("person_always", "allow", "accept", "user_permanent"),
    ("person_reject", "deny", "reject", "user_reject"),
    ("person_cancel", "deny", "reject", "user_abort"),
    ("cancelled", "deny", "reject", "user_abort"),
    ("hook", "deny", "reject", "hook"),
    ("headless_default", "deny", "reject", "config"),
])
def test_who_decided_is_claude_codes_source(decided_by, ran, decision, source):
    sent = attributes({**RECORD, "decided_by": decided_by, "decision": ran})
    assert (sent["decision"], sent["source"], sent["dm_cc.decided_by"]) == (
        decision, source, decided_by)


def test_every_decided_by_of_the_audit_log_has_a_source():
    from dm_cc.core import audit

    doc = audit.__doc__
    table = doc[doc.index("who settled the call:"):doc.index("A log that cannot")].splitlines()
    names = {name for line in table if line.startswith("    ") and not line.startswith("     ")
             for name in line.strip().split("  ")[0].split(" | ")}
    assert names == set(SOURCES)


# --------------------------------------------------------------------------- configuration


def test_nothing_is_configured_unless_the_setting_says_otlp():
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_LOGS_EXPORTER": "otlp"}
    assert telemetry_config(Settings(), env) is None   # a shell's OTEL_* alone sends nothing
    on = Settings(telemetry="otlp")
    assert telemetry_config(on, {**env, "OTEL_LOGS_EXPORTER": "none"}) is None
    assert telemetry_config(on, {**env, "OTEL_SDK_DISABLED": "true"}) is None
    config = telemetry_config(on, env)
    assert config is not None and config.protocol == "http/protobuf"
    assert config.endpoint is None and config.shown == "http://collector:4318/v1/logs"
    assert config.timeout == telemetry.EXPORT_SECONDS and not config.with_input


def test_the_setting_and_the_standard_variables_name_the_endpoint_and_protocol():
    on = Settings(telemetry="otlp", telemetry_endpoint="https://otel.example.com:4318/")
    config = telemetry_config(on, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored:1"})
    assert config is not None and config.endpoint == "https://otel.example.com:4318/v1/logs"
    env = {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
           "OTEL_EXPORTER_OTLP_ENDPOINT": "https://me:hunter2@otel:4317?token=x",
           "OTEL_EXPORTER_OTLP_TIMEOUT": "5"}
    config = telemetry_config(Settings(telemetry="otlp"), env)
    assert config is not None and config.protocol == "grpc" and config.endpoint is None
    assert config.shown == "https://otel:4317"     # no password, no query, where it is said
    assert config.timeout is None                   # the variable's, as the exporter reads it
    logs_only = {**env, "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf"}
    assert telemetry_config(Settings(telemetry="otlp"), logs_only).protocol == "http/protobuf"
    with pytest.raises(ValueError, match="'http/json' is not supported"):
        telemetry_config(Settings(telemetry="otlp"), {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})


# --------------------------------------------------------------------------- the exporter


def exporter_at(endpoint: str, monkeypatch, *, timeout: float = 0.5) -> DecisionExporter:
    monkeypatch.setenv("OTEL_BLRP_SCHEDULE_DELAY", "20")   # the standard variable: send soon
    config = TelemetryConfig("http/protobuf", endpoint + "/v1/logs", endpoint, timeout, False)
    return DecisionExporter.start(config)


def until(condition, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.02)
    return found


def test_a_collector_that_is_down_drops_counted_decisions_and_one_that_comes_up_gets_them(
        monkeypatch):
    port = free_port()
    exporter = exporter_at(f"http://127.0.0.1:{port}", monkeypatch)
    started = time.monotonic()
    assert [exporter({**RECORD, "call_id": f"down{n}"}) for n in range(3)] == [None, None, None]
    assert time.monotonic() - started < 0.1        # queued, never waited on the network
    notice = until(lambda: exporter(RECORD))       # told once the export failed
    assert "not reaching the collector at http://127.0.0.1:" in notice
    assert exporter(RECORD) is None                # once
    with http_collector(port) as collector:
        back = until(lambda: exporter({**RECORD, "call_id": "after"}))
        assert "answers again" in back and "were not delivered" in back
        exporter({**RECORD, "call_id": "last"})
        summary = exporter.close()
        arrived = [r.attributes["call_id"] for r in collector.records]
    assert "last" in arrived and "after" in arrived
    assert not {"down0", "down1", "down2"} & set(arrived)      # sent while it was down: dropped
    lost = exporter.emitted - len(arrived)
    assert lost > 0 and summary == (f"telemetry: {lost} of {exporter.emitted} decisions not "
                                    f"delivered to the collector at http://127.0.0.1:{port}")


def test_closing_never_waits_for_a_collector_that_hangs(monkeypatch):
    monkeypatch.setattr(telemetry, "CLOSE_SECONDS", 0.3)
    with socket.socket() as hanging:       # takes the connection, never answers
        hanging.bind(("127.0.0.1", 0))
        hanging.listen()
        exporter = exporter_at(f"http://127.0.0.1:{hanging.getsockname()[1]}", monkeypatch,
                               timeout=30)   # the SDK's own default would hold the exit
        exporter(RECORD)
        time.sleep(0.1)                    # the export is under way, blocked
        started = time.monotonic()
        summary = exporter.close()
        assert time.monotonic() - started < 1.0
    assert summary is not None and summary.startswith("telemetry: 1 of 1 decision not delivered")
    assert exporter(RECORD) is None        # after closing: nothing, no error


def test_records_reach_the_collector_with_dm_cc_as_the_service(monkeypatch):
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "team=payments,deployment.environment=ci")
    with http_collector() as collector:
        exporter = exporter_at(collector.endpoint, monkeypatch)
        exporter(RECORD)
        assert exporter.close() is None    # all delivered: nothing to say
        [record] = collector.records
    assert (record.body, record.event_name, record.severity) == (
        "dm_cc.tool_decision", "dm_cc.tool_decision", "INFO")
    assert record.attributes == attributes(RECORD)
    assert record.resource["service.name"] == "dm_cc"
    assert (record.resource["team"], record.resource["deployment.environment"]) == ("payments", "ci")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "dm_cc-ci")
    with http_collector() as collector:
        exporter = exporter_at(collector.endpoint, monkeypatch)
        exporter(RECORD)
        exporter.close()
        assert collector.records[0].resource["service.name"] == "dm_cc-ci"
