"""Read-only by construction: what an agent that may only read is allowed follows
from what each tool does (the catalog's effects, an MCP tool's annotations), not
from lists of denies, and holds under any rules.

The property: under ANY user, project, ``--policy`` and ``agents:`` rules and any
approvals, no read-only agent (plan, explore, reviewer, an agent file's ``may:
[read]``) is allowed a request that writes, deletes, reaches the network, leaves
the sandbox, or starts a tool or agent that is not read-only -- the plan agent's
own plan file the one named exception. A shell command counts by what the
analysis finds it does, so ``git status`` stays allowed.
"""

from __future__ import annotations

import json
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.cli import main
from dm_cc.compose import Options, World, open_world
from dm_cc.core.hooks import CallFacts, consult_hooks
from dm_cc.permissions import Request, Rule
from dm_cc.policy.hooks import Hook
from dm_cc.tools.catalog import entries, mcp_effects

READ_ONLY = ("plan", "explore", "reviewer", "looker")   # looker: a user agent, may: [read]

LOOKER = """---
description: Looks around; its own rules allow everything.
mode: all
may: [read]
rules:
  - {permission: "*", pattern: "*", action: allow}
---
Look.
"""

# Calls that do more than read, each (tool, main input). Request-level ones that no
# tool makes (the sandbox's network, an escape) are requests below.
DO_MORE = [
    ("write", "src/a.py"), ("edit", "README.md"), ("edit", ".dm_cc/policy.yaml"),
    ("edit", "~/.bashrc"), ("edit", ".dm_cc/plans/another-session.md"),
    ("bash", "rm -rf src"), ("bash", "rm README.md"), ("bash", "touch x"),
    ("bash", "echo hi > out.txt"), ("bash", "git status && rm x"), ("bash", "git commit -m x"),
    ("bash", "git push origin main"), ("bash", "npm install left-pad"), ("bash", "python3 x.py"),
    ("bash", "sed -i s/a/b/ f.txt"), ("bash", "find . -delete"), ("bash", "ls | xargs rm"),
    ("bash", "curl https://example.com/ -o x"), ("bash", "make"),
    ("webfetch", "https://example.com/"), ("task", "general"), ("todo", ""),
    ("mcp__gh__create_pull_request", '{"title": "x"}'),
]
DO_MORE = [call for call in DO_MORE if call != ("todo", "")]   # todo only takes notes
BEYOND = [Request("network", "example.com", language="url"),
          Request("sandbox_escape", "npm install")]
SWITCH = [("plan_exit", "")]    # leaving a read-only agent: the person's call, never automatic

ACTIONS = st.sampled_from(["allow", "allow", "ask", "deny"])
PERMISSIONS = ["*", "read", "edit", "bash", "webfetch", "task", "todo", "plan_exit",
               "network", "sandbox_escape", "external_directory", "mcp__*",
               "mcp__gh__create_pull_request", "glob", "grep", "list", "e*", "?ash"]
PATTERNS = ["*", "**", "src/**", ".dm_cc/**", ".dm_cc/plans/*.md", "README.md", "git *",
            "rm *", "npm *", "make", "general", "https://*", "example.com", "~/**", "/**"]


@st.composite
def rules(draw, max_size: int = 5) -> list[dict]:
    return [{"permission": draw(st.sampled_from(PERMISSIONS)),
             "pattern": draw(st.sampled_from(PATTERNS)), "action": draw(ACTIONS)}
            for _ in range(draw(st.integers(0, max_size)))]


@st.composite
def policies(draw) -> dict:
    overrides = {name: draw(rules()) for name in READ_ONLY if draw(st.booleans())}
    if draw(st.booleans()):   # the bluntest try: an override that allows everything
        overrides.setdefault("plan", []).append({"permission": "*", "pattern": "*",
                                                 "action": "allow"})
    return {"user": draw(rules()), "project": draw(rules()), "extra": draw(rules()),
            "overrides": overrides,
            "approvals": [Rule(p["permission"], p["pattern"], "allow", source="approval:apr_1")
                          for p in draw(rules()) if p["permission"] != "*"]}


@contextmanager
def project(policy: dict) -> Iterator[World]:
    with tempfile.TemporaryDirectory(prefix="dmcc-readonly-") as base:
        root = Path(base) / "project"
        (root / ".git").mkdir(parents=True)
        config = Path(base) / "dmhome" / "config"
        (config / "agents").mkdir(parents=True)
        (config / "agents" / "looker.md").write_text(LOOKER)
        (config / "policy.yaml").write_text(json.dumps({"rules": policy["user"]}))
        (root / ".dm_cc").mkdir()
        (root / ".dm_cc" / "policy.yaml").write_text(json.dumps(
            {"rules": policy["project"], "agents": {name: {"rules": r}
                                                   for name, r in policy["overrides"].items()}}))
        extra = Path(base) / "extra.yaml"
        extra.write_text(json.dumps({"rules": policy["extra"]}))
        env = {"HOME": str(Path(base) / "home"), "DM_CC_HOME": str(Path(base) / "dmhome"),
               "DM_CC_MANAGED_DIR": str(Path(base) / "managed")}
        yield open_world(Options(policies=(str(extra),)), cwd=root, env=env)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies())
def test_no_rules_and_no_approvals_let_a_read_only_agent_do_more_than_read(policy):
    with project(policy) as world:
        for name in READ_ONLY:
            gate = world.gate(world.agent(name), approvals=policy["approvals"],
                              session_id="s1")
            for tool, text in DO_MORE:
                decision = gate.decide(world.requests(tool, text))
                assert decision.action != "allow", (name, tool, text, decision.deciding)
            for request in BEYOND:
                assert gate.judge(request).action != "allow", (name, request)
            for tool, text in SWITCH:
                assert gate.decide(world.requests(tool, text)).action != "allow", (name, tool)


def test_a_read_only_agent_reads_and_runs_what_only_reads(project_dir):
    world = open_world(cwd=project_dir)
    plan = world.gate(world.agent("plan"), session_id="s1")
    for tool, text in (("read", "src/a.py"), ("grep", "src"), ("glob", "."), ("list", "."),
                       ("bash", "git status"), ("bash", "git diff HEAD~1 | head"),
                       ("bash", "ls -la && cat README.md"), ("todo", "")):
        assert plan.decide(world.requests(tool, text)).action == "allow", (tool, text)
    # its own plan file, the one named exception
    assert plan.decide(world.requests("edit", ".dm_cc/plans/s1.md")).action == "allow"
    # and the subagents that only read, as the plan agent may start them
    for name in ("explore", "reviewer"):
        assert plan.decide(world.requests("task", name)).action == "allow"


def test_a_hook_that_allows_everything_opens_nothing_for_a_read_only_agent(project_dir,
                                                                          tmp_path):
    script = tmp_path / "yes.py"
    script.write_text(textwrap.dedent("""
        import json, sys
        json.load(sys.stdin)
        print(json.dumps({"decision": "allow"}))
    """))
    hooks = [Hook("*", "*", (sys.executable, str(script)), 5, "policy.yaml:1", "user")]
    world = open_world(cwd=project_dir)
    gate = world.gate(world.agent("plan"))
    import asyncio

    # (plan_exit stays a question, which a hook of the person's own may answer, as any ask)
    for tool, text in (("edit", "src/a.py"), ("bash", "npm install"), ("webfetch", "https://x/"),
                       ("task", "general")):
        decision = gate.decide(world.requests(tool, text))
        facts = CallFacts(tool, text, {}, "plan", None, str(project_dir))
        consulted = asyncio.run(consult_hooks(decision, hooks, gate, facts))
        assert consulted.action != "allow", (tool, consulted.deciding)


def test_an_mcp_tool_is_read_only_only_when_its_server_says_so_and_the_world_is_closed():
    assert mcp_effects(True, False) == {"read"}
    assert mcp_effects(True, None) == {"read", "network"}     # the spec's default: open world
    assert "write" in mcp_effects(None, False) and "write" in mcp_effects(False, False)


# --------------------------------------------------------------------------- the command line

EVERYTHING = """
rules:
  - {permission: "*", pattern: "*", action: allow}
agents:
  plan: {rules: [{permission: "*", pattern: "*", action: allow}]}
  explore: {rules: [{permission: "*", pattern: "*", action: allow}]}
"""
INPUTS = {"file": "src/a.py", "directory": ".", "search": ".", "shell": "npm install",
          "url": "https://example.com/", "name": "", "json": "{}"}


def _check(agent: str, tool: str, text: str, capsys) -> str:
    assert main(["policy", "check", "--agent", agent, "--json", tool, text]) == 0
    return json.loads(capsys.readouterr().out)["decision"]


@pytest.mark.parametrize("agent", ["plan", "explore"])
def test_policy_check_denies_every_tool_that_does_more_than_read(agent, project_dir, capsys):
    """Under a policy that allows everything, for every tool of the catalog (a tool
    added later is covered by what it declares) and an MCP tool nobody described."""
    (project_dir / ".dm_cc").mkdir()
    (project_dir / ".dm_cc" / "policy.yaml").write_text(EVERYTHING)
    user = Path(open_world(cwd=project_dir).env["DM_CC_HOME"]) / "config"
    user.mkdir(parents=True)
    (user / "policy.yaml").write_text(EVERYTHING)
    tools = [(e.name, "general" if e.name == "task" else INPUTS[e.kind], e.effects)
             for e in entries()]
    tools.append(("mcp__github__create_pull_request", '{"title": "x"}', {"everything"}))
    for tool, text, effects in tools:
        decision = _check(agent, tool, text, capsys)
        if effects <= {"read"} or (tool == "todo" and agent == "plan"):
            assert decision == "allow", (tool, decision)
        else:
            assert decision == "deny" or (tool.startswith("plan_") and decision != "allow"), \
                (tool, decision)


@pytest.fixture
def project_dir(project) -> Path:
    return project
