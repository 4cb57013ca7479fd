"""Accept-edits (the REPL's Shift+Tab, issue 23 item 11): edits inside the project
allowed for the session, as a layer right after the built-in defaults. It changes
only what the defaults decide: never a deny, an ask a file says, a protected path,
a path outside the project, an agent that may not edit; subagents accept edits
exactly when the session above them does, within their own rights."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.agents.builtin import BUILTIN_AGENTS
from dm_cc.compose import Options, open_world
from dm_cc.config import HostFilesystem
from dm_cc.core.approval import HeadlessApprover, ScriptedApprover
from dm_cc.llm.scripted import ScriptedModel, call, reply
from dm_cc.permissions import PathContextDirs, path_requests
from dm_cc.permissions.protected import DEFAULT_PROTECTED
from dm_cc.policy import Capabilities, Link, parse_policy
from dm_cc.policy.layers import ACCEPT_EDITS_LAYER, Policy
from dm_cc.tools import effects_of, known_permissions


def run(loop, prompt: str):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def decide(loop, path: str, permission: str = "edit"):
    return loop.rights.gate().decide(path_requests(permission, path, loop.rt.where)).action


def user_policy(project: Path, text: str) -> None:
    home = Path(project.parent / "dmhome" / "config")
    home.mkdir(parents=True, exist_ok=True)
    (home / "policy.yaml").write_text(textwrap.dedent(text))


def test_edits_inside_the_project_only_and_never_what_a_rule_or_protection_says(project,
                                                                                tmp_path):
    (project / "out").symlink_to(tmp_path)          # inside by name, outside in fact
    user_policy(project, """\
        rules:
          - {permission: edit, pattern: 'migrations/**', action: ask}
          - {permission: edit, pattern: 'vendor/**', action: deny}
        """)
    loop = open_world(Options(), cwd=project).open_loop(HeadlessApprover(),
                                                        model=ScriptedModel([]))
    assert decide(loop, "src/app.py") == "ask"
    loop.accept_edits()
    assert loop.rights.accept_edits
    assert decide(loop, "src/app.py") == "allow"
    assert decide(loop, str(project / "deep" / "er.txt")) == "allow"   # absolute, inside
    assert decide(loop, "migrations/0001.py") == "ask"      # your ask rule still asks
    assert decide(loop, "vendor/lib.py") == "deny"          # and your deny denies
    assert decide(loop, ".envrc") == "ask"                  # protected: runs code later
    assert decide(loop, ".git/hooks/pre-commit") == "ask"
    assert decide(loop, "/tmp/outside.txt") == "ask"        # outside the project
    assert decide(loop, "../sibling/a.txt") == "ask"
    assert decide(loop, "out/a.txt") == "ask"               # a link to outside
    assert decide(loop, "src/app.py", "delete") == "ask"    # edits, not deletes
    verdict = loop.rights.gate().judge(path_requests("edit", "src/app.py", loop.rt.where)[0])
    assert verdict.layer == ACCEPT_EDITS_LAYER and verdict.rule.source == "builtin:accept-edits"
    # any switch of agent ends it; it is never saved with the session
    loop.switch_agent("plan")
    loop.switch_agent("build")
    assert not loop.rights.accept_edits and decide(loop, "src/app.py") == "ask"


def test_a_write_runs_without_a_question_and_one_outside_still_asks(project, tmp_path):
    outside = tmp_path / "elsewhere.txt"
    model = ScriptedModel([call("write", path="a.txt", content="A\n"),
                           call("write", path=str(outside), content="B\n"), reply("done")])
    approver = ScriptedApprover(["reject"])
    loop = open_world(Options(), cwd=project).open_loop(approver, model=model)
    loop.accept_edits()
    run(loop, "write both")
    assert (project / "a.txt").read_text() == "A\n" and not outside.exists()
    assert [asked.main_input for asked in approver.asked] == [str(outside)]


def test_subagents_accept_edits_while_the_session_does_within_their_rights(project):
    script = {"general": [call("write", path="g.txt", content="G\n"), reply("written")],
              "explore": [call("write", path="e.txt", content="E\n"), reply("could not")]}
    model = ScriptedModel([
        call("task", description="write g", prompt="general: write g.txt",
             subagent_type="general"),
        call("task", description="write e", prompt="explore: write e.txt",
             subagent_type="explore"),
        reply("done")], tasks=script)
    loop = open_world(Options(), cwd=project).open_loop(ScriptedApprover(), model=model)
    loop.accept_edits()
    run(loop, "delegate")
    assert (project / "g.txt").read_text() == "G\n"     # no question: none was scripted
    assert not (project / "e.txt").exists()             # explore may not edit at all
    # a child's rights read the session's word live: off, and its edits ask again
    child = loop.rights.child(loop.session)
    assert child.accept_edits
    loop.rights.accept_edits = False
    assert not child.accept_edits


# ---------------------------------------------------------------------- the property

PERMISSIONS = ("edit", "*", "read", "external_directory", "bash")
PATTERNS = ("**", "*", "src/**", "src/a.py", ".envrc", "/tmp/**", "/tmp/x.txt", "*.py")
PATHS = ("src/a.py", "b.txt", ".envrc", ".git/config", "/tmp/x.txt", "../up.txt",
         "src/deep/c.py", "Makefile")
rules = st.lists(st.tuples(st.sampled_from(PERMISSIONS), st.sampled_from(PATTERNS),
                           st.sampled_from(("allow", "ask", "deny"))), max_size=5)


def _policy_file(specs, name):
    lines = ["rules:"] + [f"  - {{permission: '{p}', pattern: '{pat}', action: {a}}}"
                          for p, pat, a in specs]
    return parse_policy("\n".join(lines) + "\n" if specs else "{}\n", name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(user=rules, managed=rules, agent=st.sampled_from(("build", "plan", "general")),
       path=st.sampled_from(PATHS), permission=st.sampled_from(("edit", "read", "delete")))
def test_accept_edits_changes_nothing_but_what_the_defaults_decide_about_edits_inside(
        user, managed, agent, path, permission):
    root, home = Path("/w/project"), Path("/w/home")
    policy = Policy(root, home, managed=(_policy_file(managed, "managed.yaml"),),
                    user=(_policy_file(user, "user.yaml"),))
    agents = BUILTIN_AGENTS
    where = PathContextDirs(root, root, home, HostFilesystem(), DEFAULT_PROTECTED)
    caps = Capabilities({p: effects_of(p) for p in known_permissions()},
                        {name: a.may for name, a in agents.items() if a.mode != "primary"})
    lineage = [Link(agents["build"]), Link(agents[agent])] if agent == "general" \
        else [Link(agents[agent])]
    requests = path_requests(permission, path, where)
    before = policy.lineage_gate(lineage, caps).decide(requests)
    after = policy.lineage_gate(lineage, caps, accept_edits=True).decide(requests)
    if after.action == before.action:
        return
    # the only change: an edit inside the project, not protected, that the defaults
    # asked about, now allowed
    (verdict,) = [v for v in before.verdicts if v.action == "ask"]
    assert permission == "edit" and after.action == "allow"
    assert verdict.layer == "builtin" and not path.startswith(("/", ".."))
    assert verdict.request.protected is None
