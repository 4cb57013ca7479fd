"""`dm_cc run --json` against Anthropic's Messages API on loopback: the breakpoints
the loop's real requests carry, and the cache counts in the result's usage."""

from __future__ import annotations

import json

import pytest
from support.anthropic_server import serve
from support.model_server import text, tool_calls

from dm_cc.cli import main

pytestmark = pytest.mark.usefixtures("litellm_imported")



def test_a_run_marks_its_requests_and_reports_cache_reads_and_writes(project, monkeypatch,
                                                                     capsys):
    monkeypatch.chdir(project)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")
    for name in ("a.txt", "b.txt"):
        (project / name).write_text(f"{name} says hello\n")
    script = [tool_calls(("read", {"path": "a.txt"}), ("read", {"path": "b.txt"}),
                         cache=(0, 3000)),
              text("Both say hello.", usage=(40, 6), cache=(3000, 150))]
    with serve(script) as server:
        code = main(["run", "--json", "--model", "anthropic/claude-sonnet-4-5",
                     "--api-base", server.base_url, "read a.txt and b.txt"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and records[-1]["text"] == "Both say hello."
    first, second = server.bodies
    assert first["system"][-1]["cache_control"] == first["tools"][-1]["cache_control"] \
        == first["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    # the second request: the first one's prompt and the two results, marked
    prompt, _, results = second["messages"]
    assert "cache_control" in prompt["content"][-1]
    assert [b["type"] for b in results["content"]] == ["tool_result", "tool_result"]
    assert "cache_control" in results["content"][-1] and "cache_control" not in results["content"][0]
    assert sum(json.dumps(body).count('"cache_control"') for body in server.bodies) == 3 + 4
    usage = records[-1]["usage"]
    assert usage["cache_read_tokens"] == 3000 and usage["cache_write_tokens"] == 3150
    assert usage["prompt_tokens"] == 12 + 3000 + 40 + 3000 + 150    # cached ones counted in
    assert usage["cost"] > 0
