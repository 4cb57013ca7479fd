"""The gate's variant cases (issue 22) through the real entry point: ``dm_cc run`` in a
subprocess with the scripted model, one bash call per case, headless (``--on-ask deny``).

The cases are the tables of ``tests/permissions/test_gate_*.py`` (each a module-level
``CASES`` of ``(rules, tool, text, expect)``), judged there in process; here the attack
cases (``deny`` / ``not-allow``) of each rule set run as one session, with those rules as
the person's policy, and every call must be decided as the table says and run nothing:
its result is a refusal, and no file in the project changed. Rule sets are grouped so a
handful of processes covers every table.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import pytest

from dm_cc.cli import main
from dm_cc.permissions import Rule

HERE = Path(__file__).resolve().parents[1] / "permissions"
sys.path.insert(0, str(HERE))  # the tables import judging.py as their neighbour
from judging import meets  # noqa: E402

REFUSED = ("Permission denied", "bash was not run")


def _tables() -> list[tuple[str, list[tuple[Sequence[Rule], str, str, str]]]]:
    tables = []
    for path in sorted(HERE.glob("test_gate_*.py")):
        spec = importlib.util.spec_from_file_location(f"gate_cases_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases = getattr(module, "CASES", None)
        if cases:
            tables.append((path.stem, list(cases)))
    return tables


def _groups() -> dict[tuple[Rule, ...], list[tuple[str, str, str]]]:
    """Attack cases by rule set: (table, text, expect) for each bash call."""
    groups: dict[tuple[Rule, ...], list[tuple[str, str, str]]] = defaultdict(list)
    for name, cases in _tables():
        for rules, tool, text, expect in cases:
            if tool == "bash" and expect in ("deny", "not-allow") and "{" not in text[:1]:
                groups[tuple(rules)].append((name, text, expect))
    return groups


GROUPS = _groups()
# The rule sets most cases share, each one session; a rare rule set is judged in process only.
LARGEST = sorted(GROUPS, key=lambda rules: -len(GROUPS[rules]))[:6]


def _policy(rules: Sequence[Rule]) -> str:
    lines = ["rules:"]
    for rule in rules:
        lines.append(f"  - {{permission: {json.dumps(rule.permission)}, "
                     f"pattern: {json.dumps(rule.pattern)}, action: {rule.action}}}")
    return "\n".join(lines) + "\n"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts
            and p.name != ".script.json"}


@pytest.mark.skipif(not GROUPS, reason="no gate case tables yet")
@pytest.mark.parametrize("rules", LARGEST, ids=lambda rules: " + ".join(
    f"{r.action} {r.permission} {r.pattern}" for r in rules)[:80])
def test_cases_are_decided_alike_through_dm_cc_run(rules, project, tmp_path) -> None:
    cases = GROUPS[rules]
    config = tmp_path / "dmhome" / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "policy.yaml").write_text(_policy(rules))
    for name in ("README", "x", "y", "list", "a.tar", "x.patch"):
        (project / name).write_text("keep\n")
    before = _snapshot(project)
    script = project / ".script.json"
    script.write_text(json.dumps([*({"tool": "bash", "args": {"command": text}}
                                    for _, text, _ in cases), {"text": "done"}]))
    done = subprocess.run([sys.executable, "-m", "dm_cc", "run", "--json", "--on-ask", "deny",
                           "--max-turns", str(len(cases) + 5), "--model",
                           f"scripted:{script}", "go"], cwd=project, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    records = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    decided = [r for r in records if r["type"] == "tool_decided"]
    finished = [r for r in records if r["type"] == "tool_finished"]
    assert [r["arguments"]["command"] for r in decided] == [text for _, text, _ in cases]
    wrong = [(name, text, expect, r["decision"])
             for (name, text, expect), r in zip(cases, decided, strict=True)
             if r["decision"] == "allow" or (expect == "deny" and r["decision"] != "deny")]
    assert not wrong
    ran = [r["output"][:120] for r in finished if not r["output"].startswith(REFUSED)]
    assert not ran
    assert _snapshot(project) == before


@pytest.mark.parametrize("name,cases", _tables(), ids=lambda value: value
                         if isinstance(value, str) else "")
def test_cases_are_decided_alike_by_policy_check(name, cases, project, tmp_path, monkeypatch,
                                                 capsys) -> None:
    """Every case of a table (allows too) through ``dm_cc policy check --json``, where every
    built-in layer applies as well: never looser than the table says."""
    monkeypatch.chdir(project)
    policies: dict[tuple[Rule, ...], Path] = {}
    wrong = []
    for rules, tool, text, expect in cases:
        if tuple(rules) not in policies:
            policies[tuple(rules)] = tmp_path / f"policy-{len(policies)}.yaml"
            policies[tuple(rules)].write_text(_policy(rules))
        code = main(["policy", "check", "--json", "--policy", str(policies[tuple(rules)]),
                     tool, text])
        decision = json.loads(capsys.readouterr().out)["decision"] if code == 0 else "error"
        # an allow the table expects may still ask here (a built-in layer): never looser
        if decision == "error" or (expect != "allow" and not meets(decision, expect)):
            wrong.append((text, expect, decision))
    assert not wrong
