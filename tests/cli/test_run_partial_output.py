"""``dm_cc run``: a command that times out keeps what it printed until then, in its
result and in what the model is sent next (the CLI in-process, the scripted model
echoing the last tool result, the real bash tool)."""

from __future__ import annotations

import json

from support.policy import my_policy

from dm_cc.cli import main


def test_a_command_that_times_out_keeps_what_it_printed(project, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(project)
    my_policy("  - {permission: bash, pattern: '*', action: allow}\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool": "bash", "args": {"command": "echo before; echo more >&2; sleep 30",
                                  "timeout": 1}},
        {"text": "seen: ", "echo": True}]))
    code = main(["run", "--json", "--model", f"scripted:{script}", "go"])
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    finished = next(r for r in records if r["type"] == "tool_finished")
    said = ("before\nmore\n(timed out after 1 s: the command and its process group were "
            "killed; the output above is what it printed until then)")
    assert finished["is_error"] and finished["output"].startswith(said)
    assert code == 0 and records[-1]["text"].startswith("seen: " + said)
