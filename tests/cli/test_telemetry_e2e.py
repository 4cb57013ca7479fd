"""The decisions of a real ``dm_cc run`` (scripted model, real tools) at a loopback
OpenTelemetry collector, over OTLP/HTTP and OTLP/gRPC; nothing when it is not
configured; a collector that is down costs the run no time (docs/telemetry.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from support.otlp import free_port, grpc_collector, http_collector
from support.trust import trust_project, trusted_policy

from dm_cc.session import telemetry

SECRET = "sk-live-0123456789SECRET"

POLICY = """\
rules:
  - {permission: bash, pattern: "echo *", action: allow}
  - {permission: bash, pattern: "rm *", action: deny, reason: no deleting}
"""

SCRIPT = f"""\
replies:
  - {{tool: bash, args: {{command: "echo hello"}}}}
  - {{tool: bash, args: {{command: "rm -rf build"}}}}
  - {{tool: bash, args: {{command: "deploy --token {SECRET}"}}}}
  - {{tool: task, args: {{description: look, prompt: "look around", subagent_type: explore}}}}
  - {{text: done}}
tasks:
  look around:
    - {{tool: read, args: {{path: README.md}}}}
    - {{text: nothing to see}}
"""


@pytest.fixture
def scripted(project, tmp_path, monkeypatch):
    """A trusted project with a policy, and the run's argv: an allowed, a denied, an
    asked (headless-denied) call holding a token, and a subagent that reads a file."""
    trusted_policy(project, POLICY)
    (project / "README.md").write_text("hello\n")
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    monkeypatch.setenv("OTEL_BLRP_SCHEDULE_DELAY", "50")
    return ["run", "--model", f"scripted:{script}", "go"]


@pytest.mark.parametrize(("collector", "protocol"), [(http_collector, "http/protobuf"),
                                                     (grpc_collector, "grpc")])
def test_a_runs_decisions_reach_the_collector_with_their_rule(scripted, cli, monkeypatch,
                                                              collector, protocol):
    with collector() as received:
        monkeypatch.setenv("DM_CC_TELEMETRY", "otlp")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", received.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team-token=team-42")
        code, _out, err = cli(*scripted)
        assert code == 0, err
        records = received.wait_for(5, timeout=5)   # closing the run sent them all
    assert "telemetry" not in err                    # all delivered: nothing said
    summary = [(r.attributes["dm_cc.agent"], r.attributes["tool_name"], r.attributes["decision"],
                r.attributes["source"], r.attributes["dm_cc.rule.source"]) for r in records]
    assert summary == [
        ("build", "bash", "accept", "config", ".dm_cc/policy.yaml:2"),
        ("build", "bash", "reject", "config", ".dm_cc/policy.yaml:3"),
        ("build", "bash", "reject", "config", "builtin:defaults"),
        ("build", "task", "accept", "config", "builtin:defaults"),
        ("explore", "read", "accept", "config", "builtin:defaults"),
    ]
    allowed, denied, asked, task, child = (r.attributes for r in records)
    assert denied["dm_cc.rule.layer"] == "project" and denied["dm_cc.rule.reason"] == "no deleting"
    assert (asked["dm_cc.gate"], asked["dm_cc.decided_by"], asked["dm_cc.answer"]) == (
        "ask", "headless_default", "reject")
    assert child["dm_cc.subagent"] == "explore #1"
    assert child["dm_cc.root_session.id"] == allowed["session.id"] != child["session.id"]
    assert all(r.event_name == "dm_cc.tool_decision" for r in records)
    assert records[0].resource["service.name"] == "dm_cc"
    assert records[0].headers["x-team-token"] == "team-42"    # OTEL_EXPORTER_OTLP_HEADERS
    assert SECRET not in repr(records)                         # no input unless asked for


def test_the_input_is_sent_when_the_user_config_asks(scripted, cli, monkeypatch, project):
    config = project.parent / "dmhome" / "config"
    config.mkdir(parents=True)
    with http_collector() as received:
        (config / "config.yaml").write_text(
            f"telemetry: otlp\ntelemetry_endpoint: {received.endpoint}\ntelemetry_input: true\n")
        code, _out, err = cli(*scripted)
        assert code == 0, err
        records = received.wait_for(5, timeout=5)
    asked = records[2].attributes
    assert asked["tool_input"] == f"deploy --token {SECRET}"
    assert f"deploy --token {SECRET}" in asked["dm_cc.request.patterns"]


def test_a_project_may_not_send_your_decisions_anywhere(scripted, cli, project):
    (project / ".dm_cc" / "config.yaml").write_text(
        "model: x/y\ntelemetry_endpoint: https://collector.attacker.example\n")
    trust_project(project)
    code, _out, err = cli(*scripted)
    assert code != 0
    assert ".dm_cc/config.yaml:2" in err and "its own collector" in err


def test_nothing_is_sent_nor_the_sdk_loaded_unless_configured(scripted, project):
    """The person's shell may point OTEL_* at a collector for other programs: dm_cc
    sends nothing until its own setting says otlp."""
    code = ("import sys; from dm_cc.cli import main\n"
            f"code = main({scripted!r})\n"
            "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry.sdk', 'grpc'))))\n"
            "sys.exit(code)")
    with http_collector() as received:
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": received.endpoint,
               "OTEL_LOGS_EXPORTER": "otlp"}
        done = subprocess.run([sys.executable, "-c", code], cwd=project, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        time.sleep(0.2)   # anything sent would have arrived by now
        assert received.requests == 0
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_collector_that_is_down_costs_the_run_no_time(scripted, cli, monkeypatch):
    """The same run with no telemetry, then with the collector's port closed: it ends
    within the bound on closing (never the exporter's 30 s), and says what was lost."""
    started = time.monotonic()
    assert cli(*scripted)[0] == 0
    alone = time.monotonic() - started
    monkeypatch.setenv("DM_CC_TELEMETRY", "otlp")
    monkeypatch.setenv("DM_CC_TELEMETRY_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30")     # what a slow default would do
    started = time.monotonic()
    code, out, err = cli(*scripted)
    down = time.monotonic() - started
    assert code == 0 and out.strip() == "done", err
    assert down - alone < telemetry.CLOSE_SECONDS + 0.7, (alone, down)
    assert "dm_cc: telemetry: 5 of 5 decisions not delivered to the collector at " \
           "http://127.0.0.1:" in err


def test_records_are_json_lines_of_the_audit_log_too(scripted, cli, monkeypatch, capsys):
    """One record, two listeners: what the collector gets is what the audit log keeps."""
    with http_collector() as received:
        monkeypatch.setenv("DM_CC_TELEMETRY", "otlp")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", received.endpoint)
        assert cli(*scripted)[0] == 0
        records = received.wait_for(5, timeout=5)
    code, out, _err = cli("audit", "--json")
    logged = [json.loads(line) for line in out.splitlines()]
    assert [(r["call_id"], r["session"], r["time"]) for r in logged] == [
        (r.attributes["call_id"], r.attributes["session.id"], r.attributes["event.timestamp"])
        for r in records]
