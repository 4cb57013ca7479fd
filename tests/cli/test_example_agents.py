"""The example agent files people copy (docs/examples/agents/) do what their comments
promise: copied into a project's .dm_cc/agents/ and trusted, ``dm_cc policy check``
(the real CLI) gives the decisions below; untrusted, their allows count for nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dm_cc.agents import load_agents

EXAMPLES = Path(__file__).parents[2] / "docs" / "examples" / "agents"

PROMISES = {
    "frontend": [
        ("edit", "web/components/Button.tsx", "allow"),
        ("edit", "web/package-lock.json", "ask"),
        ("edit", "server/app.py", "deny"),
        ("edit", "README.md", "deny"),
        ("bash", "npm run test -- Button", "allow"),
        ("bash", "npx tsc --noEmit", "allow"),
        ("bash", "npm install left-pad", "ask"),
        ("bash", "npm run test -- x > web/out.txt", "allow"),     # a redirect into web/
        ("bash", "npm run lint > server/lint.txt", "deny"),       # … but not elsewhere
        ("webfetch", "https://example.com", "deny"),              # may: no network
        ("task", "general", "deny"),                              # may: starts no agent
    ],
    "execute": [
        ("bash", "pytest -q tests", "allow"),
        ("bash", "make test", "allow"),
        ("bash", "npm test -- --watch=false", "allow"),
        ("bash", "pytest -q > log.txt", "deny"),                  # may: writes nothing
        ("bash", "rm -rf build", "deny"),
        ("bash", "docker compose up", "ask"),
        ("edit", "src/app.py", "deny"),
        ("webfetch", "https://pypi.org", "deny"),
    ],
}


@pytest.fixture
def copied(project):
    agents = project / ".dm_cc" / "agents"
    agents.mkdir(parents=True)
    for path in EXAMPLES.glob("*.md"):
        shutil.copy(path, agents)
    return project


def check(cli, agent: str, tool: str, text: str, *under: str) -> str:
    extra = [part for name in under for part in ("--under", name)]
    code, out, err = cli("policy", "check", "--json", "--agent", agent, *extra, tool, text)
    assert code == 0, err
    return json.loads(out)["decision"]


def test_every_example_is_checked_here():
    assert {path.stem for path in EXAMPLES.glob("*.md")} == set(PROMISES)


def test_the_examples_load_as_the_subagents_they_say(copied):
    agents = load_agents(copied)
    assert (agents["frontend"].mode, agents["frontend"].max_turns) == ("subagent", 40)
    assert (agents["execute"].mode, agents["execute"].max_turns) == ("subagent", 15)
    assert agents["execute"].may == {"read", "execute"}


def test_trusted_the_examples_decide_as_they_promise(copied, cli):
    assert check(cli, "frontend", "edit", "web/a.tsx") == "deny"   # untrusted: allows not yet
    code, _out, err = cli("trust")
    assert code == 0, err
    failed = [(agent, tool, text, expected, got)
              for agent, promises in PROMISES.items() for tool, text, expected in promises
              if (got := check(cli, agent, tool, text)) != expected]
    assert failed == []
    # started by the plan agent, the frontend developer edits nothing
    assert check(cli, "frontend", "edit", "web/a.tsx", "plan") == "deny"
