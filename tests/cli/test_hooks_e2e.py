"""Decision hooks end to end: `dm_cc run` with the scripted model and real hook
scripts, `dm_cc policy check` showing a hook's part, and a project's hooks refused."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from dm_cc.cli import main


@pytest.fixture
def project(project, monkeypatch):
    monkeypatch.chdir(project)
    return project


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def hook_script(project: Path, name: str, body: str) -> Path:
    return write(project.parent / "hooks" / f"{name}.py", body)


DENY_TOUCH = """
    import json, sys
    request = json.load(sys.stdin)
    if request["pattern"].startswith("touch pushed"):
        print(json.dumps({"decision": "deny", "reason": "no pushes on a Friday"}))
    else:
        print(json.dumps({"decision": "abstain"}))
"""

ALLOW_ALL = """
    import json, sys
    json.load(sys.stdin)
    print(json.dumps({"decision": "allow", "reason": "the build hook vouches for it"}))
"""


def policy_with_hook(path: Path, script: Path, rules: str = "", pattern: str = "touch *") -> Path:
    command = f"[{json.dumps(sys.executable)}, {json.dumps(str(script))}]"
    return write(path, f"""
        rules:
          - {{permission: bash, pattern: "touch *", action: allow}}
          - {{permission: edit, pattern: "**", action: allow}}
        {rules}
        hooks:
          - {{permission: bash, pattern: "{pattern}", command: {command}, timeout: 10}}
    """)


def scripted(project: Path, command: str) -> Path:
    return write(project.parent / "script.yaml", f"""
        - {{tool: bash, args: {{command: {json.dumps(command)}}}}}
        - {{text: done}}
    """)


def run(project: Path, capsys, command: str, *extra: str) -> tuple[int, list[dict]]:
    code = main(["run", "--json", "--model", f"scripted:{scripted(project, command)}",
                 *extra, "do it"])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return code, events


def test_a_hook_from_a_policy_file_denies_what_the_rules_allow(project, capsys):
    script = hook_script(project, "friday", DENY_TOUCH)
    team = policy_with_hook(project.parent / "team.yaml", script)
    code, events = run(project, capsys, "touch pushed", "--policy", str(team))
    assert code == 0
    assert not (project / "pushed").exists()
    decided = next(e for e in events if e["type"] == "tool_decided")
    assert decided["decision"] == "deny"
    assert decided["requests"][0]["source"].startswith("hook ")
    assert "team.yaml:6" in decided["requests"][0]["source"]
    finished = next(e for e in events if e["type"] == "tool_finished")
    assert finished["is_error"] and "no pushes on a Friday" in finished["output"]  # the model is told
    # what the hook abstains on, the rules decide
    code, events = run(project, capsys, "touch other", "--policy", str(team))
    assert (project / "other").exists()


def test_a_user_hook_turns_an_ask_into_allow(project, capsys):
    script = hook_script(project, "vouch", ALLOW_ALL)
    user = Path(os.environ["DM_CC_HOME"]) / "config" / "policy.yaml"
    write(user, f"""
        hooks:
          - {{permission: "*", command: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]}}
    """)
    code, events = run(project, capsys, "touch built")  # no rule allows touch: it asks
    assert code == 0 and (project / "built").exists()
    decided = next(e for e in events if e["type"] == "tool_decided")
    assert decided["decision"] == "allow"
    assert decided["requests"][0]["reason"] == "the build hook vouches for it"


def test_a_hook_cannot_beat_a_configured_deny(project, capsys):
    script = hook_script(project, "vouch", ALLOW_ALL)
    team = policy_with_hook(project.parent / "team.yaml", script,
                            '  - {permission: bash, pattern: "touch secret*", action: deny}')
    code, events = run(project, capsys, "touch secret", "--policy", str(team))
    assert not (project / "secret").exists()
    decided = next(e for e in events if e["type"] == "tool_decided")
    assert decided["decision"] == "deny" and not decided["requests"][0]["source"].startswith("hook")


def test_a_failing_hook_is_a_deny_in_a_headless_run_with_its_reason(project, capsys):
    script = hook_script(project, "broken", "import sys\nsys.exit('cannot reach the server')\n")
    team = policy_with_hook(project.parent / "team.yaml", script)
    code, events = run(project, capsys, "touch pushed", "--policy", str(team))
    assert not (project / "pushed").exists()
    decided = next(e for e in events if e["type"] == "tool_decided")
    assert decided["decision"] == "deny"
    assert "cannot reach the server" in decided["requests"][0]["reason"]
    finished = next(e for e in events if e["type"] == "tool_finished")
    assert "the hook failed: exit status 1" in finished["output"]


def test_a_project_policy_naming_a_hook_is_refused_at_load(project, capsys):
    marker = project.parent / "ran"
    script = hook_script(project, "evil", f"open({str(marker)!r}, 'w')\n")
    write(project / ".dm_cc" / "policy.yaml", f"""
        rules:
          - {{permission: bash, pattern: "ls *", action: allow}}
        hooks:
          - {{permission: "*", command: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]}}
    """)
    assert main(["policy", "check", "bash", "ls"]) == 2
    err = capsys.readouterr().err
    assert ".dm_cc/policy.yaml:4:" in err and "may not name hooks" in err
    code, _ = run(project, capsys, "ls")
    assert code == 2 and not marker.exists()
    write(project / ".dm_cc" / "policy.yaml", "rules: []\n")
    write(project / ".dm_cc" / "policies" / "extra.yaml", f"""
        hooks: [{{permission: bash, command: [{json.dumps(str(script))}]}}]
    """)
    assert main(["policy", "check", "bash", "ls"]) == 2
    assert ".dm_cc/policies/extra.yaml:1:" in capsys.readouterr().err


def test_policy_check_runs_the_hooks_and_shows_their_part(project, capsys):
    script = hook_script(project, "friday", DENY_TOUCH)
    team = policy_with_hook(project.parent / "team.yaml", script)
    assert main(["policy", "check", "--policy", str(team), "bash", "touch pushed && touch x"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("deny: bash")
    assert "no pushes on a Friday  [layer hook]" in out
    assert "the rules said allow" in out
    assert "answered abstain" in out          # touch x: the hook ran, the rules decided
    assert "were run now" in out
    assert main(["policy", "check", "--no-hooks", "--policy", str(team), "bash",
                 "touch pushed"]) == 0
    assert capsys.readouterr().out.startswith("allow: bash")
    assert main(["policy", "check", "--json", "--policy", str(team), "bash", "touch pushed"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["decision"] == "deny" and data["requests"][0]["decided_by"] == "hook"
    assert data["hooks"][0]["layer"] == "--policy"


@pytest.mark.parametrize(("hook", "line", "message"), [
    ('{permission: bash, command: [x], timeout: 100}', 2, "less than or equal to 60"),
    ('{permission: bsh, command: [x]}', 2, "unknown permission 'bsh'"),
    ('{permission: bash, command: []}', 2, "at least 1 item"),
    ('{permission: bash, command: [x], when: now}', 2, "when"),
])
def test_a_malformed_hook_names_its_line(project, capsys, hook, line, message):
    team = write(project.parent / "team.yaml", f"hooks:\n  - {hook}\n")
    assert main(["policy", "check", "--policy", str(team), "bash", "ls"]) == 2
    err = capsys.readouterr().err
    assert f"team.yaml:{line}" in err and message in err


def test_a_relative_program_is_found_beside_its_policy_file(project, capsys):
    script = hook_script(project, "friday", "#!" + sys.executable + "\n"
                         + textwrap.dedent(DENY_TOUCH))
    script.chmod(0o755)
    team = write(project.parent / "hooks" / "team.yaml", """
        hooks:
          - {permission: bash, command: [./friday.py]}
    """)
    assert main(["policy", "check", "--policy", str(team), "bash", "touch pushed"]) == 0
    assert capsys.readouterr().out.startswith("deny: bash")


KEEP_MIGRATIONS = """
    import json, sys
    request = json.load(sys.stdin)
    if request["permission"] == "delete" and request["pattern"].startswith("migrations/"):
        print(json.dumps({"decision": "deny", "reason": "migrations are history"}))
    else:
        print(json.dumps({"decision": "abstain"}))
"""


def test_a_hook_on_delete_sees_what_a_command_removed(project, capsys):
    """A command's changes are requests too (docs/sandbox.md, "Transactions"): a hook on
    ``delete`` keeps a removal from landing that the command's text never showed."""
    script = hook_script(project, "history", KEEP_MIGRATIONS)
    team = policy_with_hook(project.parent / "team.yaml", script,
                            rules="  - {permission: bash, pattern: '*', action: allow}",
                            pattern="*")
    team.write_text(team.read_text().replace("permission: bash, pattern: \"*\", command",
                                              "permission: delete, pattern: \"*\", command"))
    (project / "migrations").mkdir()
    (project / "migrations" / "0001.sql").write_text("create table t;\n")
    (project / "scratch.txt").write_text("x\n")
    code, events = run(project, capsys, "python3 -c \"import os; os.remove('migrations/0001.sql');"
                                        " os.remove('scratch.txt')\"", "--policy", str(team))
    assert code == 0
    assert (project / "migrations" / "0001.sql").exists()
    assert not (project / "scratch.txt").exists()
    landed = next(e for e in events if e["type"] == "changes_landed")
    assert [(r["path"], "migrations are history" in r["why"]) for r in landed["refused"]] == [
        ("migrations/0001.sql", True)]
