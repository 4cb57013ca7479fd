"""Subagent rights: a descendant never gets more than any of its ancestors (DESIGN.md §3, §5).

A child's rights (``Rights.child``) decide with its own agent's stack (with the
``subagent`` layer: no todo list, no subagents of its own) and is bounded by its
parent's gate, which its parent's parent bounds in turn. The properties are
checked over random projects -- a project policy with ``agents:`` overrides,
optional user, managed and enforced policies, custom agents defined by the
project (untrusted) or the user (trusted) -- random chains of agents (a primary
root, then one to three subagents in real child sessions) and random requests
drawn from a small alphabet, so that the rules actually match:

* without approvals, no descendant decides a request more permissively than any
  ancestor (deny > ask > allow), request by request and for the whole set;
* with approvals given to the agents of the chain (the leaf always), no
  descendant allows what any ancestor's configured rules (or its own) deny, nor
  loosens what a managed rule decided; a child's approval opens no more than the
  same approvals given to each ancestor would, and nothing for an ancestor
  (unless that ancestor's agent, or one of its own ancestors', was given some);
* todo and task stay denied in a child unless its agent rules, an ``agents:``
  override for it or an enforced rule speak of them.

Then the cases users of other tools have hit, run through the real loop and the
task tool, and a bug these properties found: an approval for a symlink's
target beat that target's configured deny (the approval check now runs name by
name, in Gate.judge).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.requests import Request

from dm_cc.agents.builtin import Agent
from dm_cc.compose import Options, World, open_world
from dm_cc.config import ProjectTrust, data_dir
from dm_cc.core.approval import Approvals, HeadlessApprover
from dm_cc.core.events import InTask, ToolFinished
from dm_cc.core.loop import Loop
from dm_cc.core.rights import Rights
from dm_cc.llm.base import ModelReply
from dm_cc.llm.scripted import ScriptedModel, calls, reply
from dm_cc.permissions import Rule
from dm_cc.permissions.rules import STRICTNESS
from dm_cc.session import ApprovalStore
from dm_cc.session.messages import Message
from dm_cc.session.store import Session

# --------------------------------------------------------------------------- a project on disk


@dataclass
class Project:
    """A git project with isolated user, data and managed dirs (nothing real is read)."""

    base: Path
    root: Path = field(init=False)
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.root = self.base / "project"
        (self.root / ".git").mkdir(parents=True)
        self.env = {"HOME": str(self.base / "home"), "DM_CC_HOME": str(self.base / "dmhome"),
                    "DM_CC_MANAGED_DIR": str(self.base / "managed")}

    def write(self, where: str, text: str) -> Path:
        """``where`` is relative to the project, or starts with ``user:`` (the user's
        config dir) or ``managed:``."""
        base, _, rest = where.rpartition(":")
        directory = {"": self.root, "user": self.base / "dmhome" / "config",
                     "managed": self.base / "managed"}[base]
        path = directory / rest
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def world(self, agent: str | None = None) -> World:
        """The world, the project's policy trusted (its agent files are not: a custom
        agent written there stays the repository's, bounded by the person's policy)."""
        trusted = {f.relative: f.digest for f in ProjectTrust.of(self.root).files
                   if f.relative.startswith(".dm_cc/polic") and f.digest}
        ApprovalStore.for_project(data_dir(self.env), self.root).trust_files(trusted)
        return open_world(Options(agent=agent), cwd=self.root, env=self.env)


@contextmanager
def project() -> Iterator[Project]:
    """A fresh project per hypothesis example (function-scoped fixtures are not)."""
    with tempfile.TemporaryDirectory(prefix="dmcc-rights-") as base:
        yield Project(Path(base))


def put_in_charge(session: Session, agent: str) -> Session:
    """The first user message, as ``run`` appends it: a session's agent is the agent
    of its last user message (before any, the one it was created for)."""
    session.append(Message("user", "(a task)", agent=agent))
    return session


def root_loop(where: Project, agent: str, events: list | None = None) -> Loop:
    """A session's own loop as ``dm_cc run --agent AGENT`` opens it (headless: asks
    are denied); each test scripts its model."""
    return where.world(agent).open_loop(
        HeadlessApprover("deny"), model=ScriptedModel([]),
        on_event=events.append if events is not None else lambda e: None)


def chain_of(world: World, names: Sequence[str]) -> list[Rights]:
    """The rights of ``names``: a primary root, then each a child (in a real child
    session, as the task tool makes it) of the one before -- built as the loop builds
    them, without a loop."""
    session = world.sessions.create(world.root, agent=names[0])
    chain = [Rights(world.policy, world.agents, Approvals(), world.capabilities(),
                    put_in_charge(session, names[0]))]
    for name in names[1:]:
        parent = chain[-1]
        session = world.sessions.create(world.root, parent_id=parent.session.info.id,
                                        title=f"step (@{name})", agent=name)
        chain.append(parent.child(put_in_charge(session, name)))
    return chain


def strictness(action: str) -> int:
    return STRICTNESS[action]


# --------------------------------------------------------------------------- strategies
#
# Patterns come from a small alphabet per permission and requests from a matching
# one, so that most rules match some request (the idea of `related` in
# tests/permissions/test_engine_properties.py).

ACTIONS = st.sampled_from(["allow", "ask", "deny"])
PATTERNS: dict[str, list[str]] = {
    "bash": ["*", "git *", "git push *", "npm *", "npm test", "rm *", "curl *", "ls *"],
    "read": ["**", "*", "src/**", "src/*.py", "*.md", "docs/**", ".env*", "a.txt"],
    "edit": ["**", "*", "src/**", "src/*.py", "*.md", "docs/**", ".env*", "a.txt",
             ".dm_cc/plans/**", "secret/**"],
    "webfetch": ["*", "https://a.example/*", "https://b.example/*"],
    "task": ["*", "explore", "general", "reviewer", "helper", "writer", "gen*"],
    "todo": ["*"],
    "*": ["*"],
}
# (tool, main input); {plan}: the root's plan file, {own}: the leaf's
REQUESTS: list[tuple[str, str]] = [
    ("bash", "git status"), ("bash", "git push origin main"), ("bash", "npm test"),
    ("bash", "npm install left-pad"), ("bash", "rm a.txt"), ("bash", "curl https://a.example/x"),
    ("bash", "ls src && rm -rf build"), ("read", "src/a.py"), ("read", ".env"),
    ("read", "docs/x.md"), ("edit", "src/a.py"), ("edit", "src/b/c.md"), ("edit", "docs/x.md"),
    ("edit", "a.txt"), ("edit", ".env.local"), ("edit", "{plan}"), ("edit", "{own}"),
    ("edit", "docs/link.md"), ("read", "docs/link.md"),   # a symlink to secret/key.txt
    ("webfetch", "https://a.example/x"), ("webfetch", "https://b.example/y"),
    ("task", "explore"), ("task", "general"), ("task", "reviewer"), ("task", "helper"),
    ("todo", ""),
]
BUILTIN_SUBAGENTS = ["explore", "general", "reviewer"]
CUSTOM = ["helper", "writer"]


@st.composite
def rule(draw, actions=ACTIONS) -> dict:
    permission = draw(st.sampled_from(list(PATTERNS)))
    return {"permission": permission, "pattern": draw(st.sampled_from(PATTERNS[permission])),
            "action": draw(actions)}


RULES = st.lists(rule(), max_size=6)


@dataclass(frozen=True)
class Custom:
    name: str
    mode: str
    trusted: bool          # a user agent (trusted) or the project's own (untrusted)
    rules: list[dict]


@dataclass(frozen=True)
class Scenario:
    project_rules: list[dict]
    overrides: dict[str, list[dict]]
    user_rules: list[dict] | None
    managed: list[dict] | None
    enforced: list[dict] | None
    customs: list[Custom]
    chain: list[str]
    requests: list[tuple[str, str]]

    def write(self, where: Project) -> None:
        where.write("secret/key.txt", "k\n")
        (where.root / "docs").mkdir()
        os.symlink(where.root / "secret" / "key.txt", where.root / "docs" / "link.md")
        where.write(".dm_cc/policy.yaml", json.dumps(
            {"rules": self.project_rules,
             "agents": {name: {"rules": rules} for name, rules in self.overrides.items()}}))
        if self.user_rules is not None:
            where.write("user:policy.yaml", json.dumps({"rules": self.user_rules}))
        if self.managed is not None:
            where.write("managed:policy.yaml", json.dumps({"rules": self.managed}))
        if self.enforced is not None:
            where.write("managed:enforced.yaml", json.dumps({"rules": self.enforced}))
        for agent in self.customs:
            front = json.dumps({"description": f"a {agent.mode} agent", "mode": agent.mode,
                                "rules": agent.rules})
            where.write(f"{'user:' if agent.trusted else '.dm_cc/'}agents/{agent.name}.md",
                        f"---\n{front}\n---\nDo the task.\n")


@st.composite
def scenarios(draw) -> Scenario:
    customs = [Custom(name, draw(st.sampled_from(["subagent", "all"])), draw(st.booleans()),
                      draw(RULES))
               for name in CUSTOM if draw(st.booleans())]
    agents = ["build", "plan", *BUILTIN_SUBAGENTS, *CUSTOM]
    overrides = draw(st.dictionaries(st.sampled_from(agents), RULES, max_size=3))
    roots = ["build", "plan", *(c.name for c in customs if c.mode == "all")]
    subagents = [*BUILTIN_SUBAGENTS, "general", *(c.name for c in customs for _ in "xy")]
    chain = [draw(st.sampled_from(roots)),
             *draw(st.lists(st.sampled_from(subagents), min_size=1, max_size=3))]
    return Scenario(
        project_rules=draw(RULES), overrides=overrides,
        user_rules=draw(st.none() | st.lists(rule(), max_size=3)),
        managed=draw(st.none() | st.lists(rule(), max_size=2)),
        enforced=draw(st.none() | st.lists(rule(), max_size=2)),
        customs=customs, chain=chain,
        requests=draw(st.lists(st.sampled_from(REQUESTS), min_size=1, max_size=4, unique=True)))


def approvals_for(requests: Sequence[Request]) -> st.SearchStrategy[list[Rule]]:
    """What a person may have approved: allow rules for an exact permission, for a
    request exactly (what "always" suggests) or with a pattern of the alphabet."""
    exact = [(r.permission, r.pattern) for r in requests]
    drawn = [(permission, pattern) for permission, patterns in PATTERNS.items()
             if permission != "*" for pattern in patterns]
    return st.lists(st.sampled_from(exact) | st.sampled_from(drawn), min_size=1,
                    max_size=4).map(lambda specs: [
                        Rule(permission, pattern, "allow", source="approval:session")
                        for permission, pattern in specs])


PROPERTY = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def requests_of(world: World, chain: Sequence[Rights],
                calls_: Sequence[tuple[str, str]]) -> list[Request]:
    plans = {"{plan}": f".dm_cc/plans/{chain[0].session.info.id}.md",
             "{own}": f".dm_cc/plans/{chain[-1].session.info.id}.md"}
    return [request for tool, text in calls_
            for request in world.requests(tool, plans.get(text, text))]


def trace(chain: Sequence[Rights], request: Request) -> str:
    lines = []
    for depth, rights in enumerate(chain):
        verdict = rights.gate().judge(request)
        lines.append(f"  {rights.agent.name}@{depth}: {verdict.action} by "
                     f"{verdict.rule.permission} {verdict.rule.pattern} {verdict.rule.action} "
                     f"({verdict.rule.source}, layer {verdict.layer}, note {verdict.note})")
    return f"{request.permission} {request.pattern}\n" + "\n".join(lines)


# --------------------------------------------------------------------------- properties


@PROPERTY
@given(scenario=scenarios())
def test_no_descendant_decides_more_permissively_than_any_ancestor(scenario):
    with project() as where:
        scenario.write(where)
        world = where.world()
        chain = chain_of(world, scenario.chain)
        requests = requests_of(world, chain, scenario.requests)
        decisions = [rights.gate().decide(requests).action for rights in chain]
        for j, descendant in enumerate(chain):
            for i in range(j):
                assert strictness(decisions[j]) >= strictness(decisions[i]), \
                    f"{scenario.chain}: {decisions}"
            for request in requests:
                verdict = descendant.gate().judge(request)
                assert all(strictness(verdict.action) >= strictness(chain[i].gate().judge(
                    request).action) for i in range(j)), trace(chain[:j + 1], request)


def _may_speak_of(world: World, agent: Agent, permission: str) -> bool:
    """Could a layer after the subagent layer decide ``permission``: the agent's own
    rules, an ``agents:`` override for it, an enforced rule?"""
    policy = world.policy
    rules = [*agent.rules, *(rule for f in policy.files for rule in f.agents.get(agent.name, ())),
             *(rule for f in policy.enforced for rule in f.rules)]
    return any(rule.permission in (permission, "*") for rule in rules)


@PROPERTY
@given(scenario=scenarios())
def test_todo_and_task_are_denied_in_a_child_unless_its_own_layers_speak_of_them(scenario):
    with project() as where:
        scenario.write(where)
        world = where.world()
        chain = chain_of(world, scenario.chain)
        for child in chain[1:]:
            for permission, name in (("todo", "*"), ("task", "explore"), ("task", "helper")):
                if not _may_speak_of(world, child.agent, permission):
                    verdict = child.gate().judge(Request(permission, name))
                    assert verdict.action == "deny", trace(chain, Request(permission, name))
                    assert child.gate().denies_outright(permission)


@PROPERTY
@given(scenario=scenarios(), data=st.data())
def test_approvals_given_to_a_child_never_beat_an_ancestors_configured_deny(scenario, data):
    with project() as where:
        scenario.write(where)
        world = where.world()
        chain = chain_of(world, scenario.chain)
        requests = requests_of(world, chain, scenario.requests)
        if not requests:
            return
        names = [rights.agent.name for rights in chain]
        before = [rights.gate().decide(requests) for rights in chain]
        approved: dict[str, list[Rule]] = {}
        for name in dict.fromkeys(names):
            if name == names[-1] or data.draw(st.booleans(), label=f"approve {name}"):
                approved[name] = data.draw(approvals_for(requests), label=f"approvals of {name}")
                chain[0].approvals.remember(name, approved[name], save=False, note="")
        # each rights's own stack without any approval (its ceilings of untrusted
        # agents and project overrides included): what is configured for it
        configured = [world.policy.gate(rights.agent, (), session_id=rights.session.info.id,
                                        subagent=rights.parent is not None,
                                        capabilities=rights.capabilities) for rights in chain]
        for j, descendant in enumerate(chain):
            gate = descendant.gate()
            # as if every approval on the way down had been given to the ancestor (in
            # the order the chain passes them up: its own first, the child's last)
            bounds = [chain[i].gate_with(tuple(rule for name in names[i:j + 1]
                                               for rule in approved.get(name, ())))
                      for i in range(j + 1)]
            for request in requests:
                verdict = gate.judge(request)
                for i in range(j + 1):
                    configured_verdict = configured[i].judge(request)
                    if configured_verdict.action == "deny":
                        assert verdict.action == "deny", \
                            f"{names[i]}@{i} denies; approvals {approved}\n" + \
                            trace(chain[:j + 1], request)
                    if configured_verdict.layer in ("managed", "enforced"):  # binding
                        assert strictness(verdict.action) >= \
                            strictness(configured_verdict.action), \
                            f"{names[i]}@{i}: managed; approvals {approved}\n" + \
                            trace(chain[:j + 1], request)
                    assert strictness(verdict.action) >= \
                        strictness(bounds[i].judge(request).action), \
                        f"approvals {approved}\n" + trace(chain[:j + 1], request)
        # An approval is its agent's. A rights's gate holds its own agent's approvals
        # and, through its ceilings, its ancestors' (and theirs count there): one
        # given to a descendant's agent alone opens nothing for the rights itself.
        for i, (rights, earlier) in enumerate(zip(chain, before, strict=True)):
            if not approved.keys() & set(names[:i + 1]):
                now = rights.gate().decide(requests)
                assert now.action == earlier.action, f"{names[i]}@{i}, approvals " \
                    f"{approved}\n" + "\n".join(trace(chain, r) for r in requests)


# --------------------------------------------------------------------------- through the loop


def run(loop: Loop, prompt: str):
    return asyncio.run(asyncio.wait_for(loop.run(prompt), timeout=30))


def finished(events: list) -> list[tuple[int, ToolFinished]]:
    """Every ToolFinished, with how deep its loop was (0: the session's own)."""
    out = []
    for event in events:
        depth = 0
        while isinstance(event, InTask):
            event, depth = event.event, depth + 1
        if isinstance(event, ToolFinished):
            out.append((depth, event))
    return out


def results_at(events: list, depth: int) -> dict[str, tuple[bool, str]]:
    """The results of the write calls at ``depth``: path -> (is_error, output)."""
    return {e.call.arguments["path"]: (e.output.is_error, e.output.output)
            for d, e in finished(events) if d == depth and e.call.name == "write"}


def task(prompt: str, agent: str) -> tuple[str, dict]:
    return ("task", {"description": "a step", "prompt": prompt, "subagent_type": agent})


def writes(*paths: str) -> ModelReply:
    return calls(*(("write", {"path": p, "content": "x\n"}) for p in paths))


# The plan agent only reads (it may start no agent that does more): a planning agent
# of the user's own, with the plan agent's old rules, is what may hand writing to a
# general child -- whose rights its own then bound.
PLANNER = """
---
description: Plans; may hand work to the agents its rules name.
mode: primary
rules:
  - {permission: edit, pattern: "*", action: deny, reason: "the planner changes nothing"}
  - {permission: bash, pattern: "*", action: deny, reason: "the planner runs nothing"}
  - {permission: edit, pattern: ".dm_cc/plans/{session}.md", action: allow}
  - {permission: task, pattern: "*", action: deny}
  - {permission: task, pattern: "explore", action: allow}
---
Plan it.
"""

PLANNER_MAY_DELEGATE = """
rules:
  - {permission: edit, pattern: "**", action: allow}
agents:
  planner:
    rules: [{permission: task, pattern: "general", action: allow}]
  general:
    rules:
      - {permission: task, pattern: "general", action: allow}
"""


def with_planner(where: Project, policy: str) -> None:
    """The person's own planner agent, and their policy (a project's overrides could
    not overrule their agent file's rules)."""
    where.write("user:agents/planner.md", PLANNER)
    where.write("user:policy.yaml", policy)


def test_a_general_child_of_a_planner_writes_no_file_the_planner_may_not(tmp_path):
    """The general agent's own rules allow every edit here (the policy's ``edit **``),
    the planner denies them: the child is denied, the rule named is the planner's.

    The plan file is the exception, and what happens is this: the plan file of the
    *parent's* session is the one file the planner may write, so there the
    child's own decision stands -- an ask, because ``.dm_cc`` is protected and
    ``edit **`` does not name it (a headless run refuses it); a rule naming the plan
    directory does not name it either. The plan file of the child's own session is
    never the planner's, so it stays denied."""
    where = Project(tmp_path)
    with_planner(where, PLANNER_MAY_DELEGATE)
    events: list = []
    loop = root_loop(where, "planner", events=events)
    parent_plan = f".dm_cc/plans/{loop.session.info.id}.md"
    loop.rt.model = ScriptedModel(
        [calls(task("child: write the files", "general")), reply("delegated")],
        tasks={"child: write": [writes("src/a.py", "docs/x.md", ".env", parent_plan),
                                reply("child done")]})
    assert run(loop, "plan it").reason == "done"
    written = results_at(events, 1)
    for path in ("src/a.py", "docs/x.md", ".env"):
        is_error, output = written[path]
        assert is_error and "denied" in output and "planner.md" in output, output
        assert not (where.root / path).exists()
    is_error, output = written[parent_plan]
    assert is_error and "headless" in output and not (where.root / parent_plan).exists()

    where.write("user:policy.yaml", PLANNER_MAY_DELEGATE
                + '      - {permission: edit, pattern: ".dm_cc/plans/**", action: allow}\n')
    world = where.world()
    plan, general = chain_of(world, ["planner", "general"])
    parent_plan = f".dm_cc/plans/{plan.session.info.id}.md"
    own_plan = f".dm_cc/plans/{general.session.info.id}.md"
    # .dm_cc/ is protected: a rule naming the plan directory is not exact, so it asks
    mine = general.gate().decide(world.requests("edit", parent_plan))
    assert mine.action == "ask" and "protected" in (mine.deciding[0].note or "")
    own = general.gate().decide(world.requests("edit", own_plan))
    assert own.action == "deny" and "planner.md" in own.deciding[0].rule.source
    assert "never gets more than the planner agent" in (own.deciding[0].note or "")


def test_a_grandchild_of_a_planner_is_still_bounded_by_it(tmp_path):
    """planner -> general -> general: the grandchild's parent would allow the edits
    (the policy's ``edit **``), its grandparent does not, and that decides."""
    where = Project(tmp_path)
    with_planner(where, PLANNER_MAY_DELEGATE)
    events: list = []
    loop = root_loop(where, "planner", events=events)
    loop.rt.model = ScriptedModel(
        [calls(task("level one: delegate", "general")), reply("delegated")],
        tasks={"level one": [calls(task("level two: write", "general")), reply("one done")],
               "level two": [writes("src/a.py", "notes.md"), reply("two done")]})
    assert run(loop, "plan it").reason == "done"
    started = [e for depth, e in finished(events) if depth == 1 and e.call.name == "task"]
    assert len(started) == 1 and not started[0].output.is_error   # general may start general
    written = results_at(events, 2)
    assert set(written) == {"src/a.py", "notes.md"}
    for path, (is_error, output) in written.items():
        assert is_error and "denied" in output and "planner.md" in output, output
        assert not (where.root / path).exists()
    world = where.world()
    requests = world.requests("edit", "src/a.py")
    assert [rights.gate().decide(requests).action
            for rights in chain_of(world, ["planner", "general", "general"])] == ["deny"] * 3
    assert [rights.gate().decide(requests).action
            for rights in chain_of(world, ["build", "general", "general"])] == ["allow"] * 3


def test_a_parent_deny_superseded_in_its_own_stack_does_not_constrain_the_child(tmp_path):
    """opencode #45078: copying a parent's deny rules into the child's ruleset denies
    what a later allow of the parent had re-opened. dm_cc compares decisions: the
    build agent allows edits in src/ (its override after the project's deny), so a
    child whose own rules allow them may make them."""
    where = Project(tmp_path)
    where.write(".dm_cc/policy.yaml", """
        rules:
          - {permission: edit, pattern: "**", action: deny, reason: "nothing by default"}
        agents:
          build:
            rules: [{permission: edit, pattern: "src/**", action: allow}]
          general:
            rules: [{permission: edit, pattern: "src/**", action: allow}]
        """)
    events: list = []
    loop = root_loop(where, "build", events=events)
    loop.rt.model = ScriptedModel(
        [calls(task("child: write", "general")), reply("delegated")],
        tasks={"child: write": [writes("src/a.py", "docs/x.md"), reply("child done")]})
    run(loop, "go")
    written = results_at(events, 1)
    assert written["src/a.py"][0] is False and (where.root / "src/a.py").exists()
    assert written["docs/x.md"][0] is True and "nothing by default" in written["docs/x.md"][1]
    assert not (where.root / "docs/x.md").exists()


WRITER = """
---
description: writes what it is told to
mode: subagent
permission:
  edit: allow
---
Write the files.
"""


def test_a_subagent_meant_to_have_more_keeps_it_where_the_parent_allows(tmp_path):
    """opencode #26700: a subagent given more than the default (edit: allow) lost it
    under its parent. Here the writer keeps it wherever build allows (src/**, by an
    override for build only), while general -- the default, edits ask -- does not
    get it, and outside src/ build asks, so the writer's edit asks too."""
    where = Project(tmp_path)
    where.write("user:agents/writer.md", WRITER)
    where.write(".dm_cc/policy.yaml", """
        agents:
          build:
            rules: [{permission: edit, pattern: "src/**", action: allow}]
        """)
    events: list = []
    loop = root_loop(where, "build", events=events)
    loop.rt.model = ScriptedModel(
        [calls(task("writer: write", "writer"), task("general: write", "general")),
         reply("delegated")],
        tasks={"writer: write": [writes("src/w.py", "docs/w.md"), reply("writer done")],
               "general: write": [writes("src/g.py"), reply("general done")]})
    run(loop, "go")
    written = results_at(events, 1)
    assert written["src/w.py"][0] is False and (where.root / "src/w.py").exists()
    assert written["docs/w.md"][0] is True and "headless" in written["docs/w.md"][1]
    assert written["src/g.py"][0] is True and not (where.root / "src/g.py").exists()
    world = where.world()
    writer = chain_of(world, ["build", "writer"])[1]
    assert writer.gate().decide(world.requests("edit", "docs/w.md")).action == "ask"
    # the same agent defined by the project (untrusted) cannot loosen the policy: its
    # edit allow does not count, not even where the parent allows
    where.write(".dm_cc/agents/writer.md", WRITER)
    world = where.world()
    assert not world.agents["writer"].trusted
    writer = chain_of(world, ["build", "writer"])[1]
    assert writer.gate().decide(world.requests("edit", "src/w.py")).action == "ask"


HELPER = """
---
description: keeps a list and delegates
mode: subagent
rules:
  - {permission: todo, pattern: "*", action: allow}
  - {permission: task, pattern: "explore", action: allow}
---
Plan, then delegate.
"""


def test_todo_and_task_are_denied_in_a_child_unless_its_agent_rules_allow_them(tmp_path):
    where = Project(tmp_path)
    where.write("user:agents/helper.md", HELPER)
    world = where.world()
    general = chain_of(world, ["build", "general"])[1]
    helper = chain_of(world, ["build", "helper"])[1]
    for permission, name in (("todo", "*"), ("task", "explore")):
        denied = general.gate().judge(Request(permission, name))
        assert denied.action == "deny" and denied.rule.source == "builtin:subagent"
        assert helper.gate().judge(Request(permission, name)).action == "allow"
    assert general.gate().denies_outright("todo") and general.gate().denies_outright("task")
    assert helper.gate().judge(Request("task", "general")).action == "deny"  # only explore
    # the root agent itself keeps both
    assert general.parent is not None
    assert general.parent.gate().decide([Request("todo", "*"), Request("task", "general")]) \
        .action == "allow"
    # a policy file's agents: override for the subagent opens them too
    where.write(".dm_cc/policy.yaml", """
        agents:
          general:
            rules: [{permission: todo, pattern: "*", action: allow}]
        """)
    world = where.world()
    general = chain_of(world, ["build", "general"])[1]
    assert general.gate().judge(Request("todo", "*")).action == "allow"
    assert general.gate().judge(Request("task", "explore")).action == "deny"
    # a child is not offered the tools it may not use
    events: list = []
    loop = root_loop(where, "build", events=events)
    model = ScriptedModel([calls(task("child: look", "explore")), reply("done")],
                          tasks={"child: look": [reply("looked")]})
    loop.rt.model = model
    run(loop, "go")
    child_tools = [tools for _system, messages, tools in model.calls
                   if messages[0].content.startswith("child: look")]
    assert child_tools and "todo" not in child_tools[0] and "task" not in child_tools[0]
    assert "todo" in model.calls[0][2] and "task" in model.calls[0][2]


YOLO = """
---
description: does anything it likes
mode: subagent
permission:
  bash: allow
  edit: allow
  webfetch: allow
  todo: allow
  task: allow
---
Anything goes.
"""


def test_a_project_defined_subagent_is_still_bounded(tmp_path):
    where = Project(tmp_path)
    where.write(".dm_cc/agents/yolo.md", YOLO)
    with_planner(where, """
        agents:
          planner:
            rules: [{permission: task, pattern: "yolo", action: allow}]
        """)
    events: list = []
    loop = root_loop(where, "planner", events=events)
    loop.rt.model = ScriptedModel(
        [calls(task("yolo: go", "yolo")), reply("delegated")],
        tasks={"yolo: go": [calls(("write", {"path": "src/a.py", "content": "x"}),
                                  ("bash", {"command": "touch pwned"})),
                            reply("yolo done")]})
    run(loop, "plan it")
    outcome = {e.call.name: e.output for d, e in finished(events) if d == 1}
    assert outcome["write"].is_error and "planner.md" in outcome["write"].output
    assert outcome["bash"].is_error and "planner.md" in outcome["bash"].output
    assert not (where.root / "src/a.py").exists() and not (where.root / "pwned").exists()
    world = where.world()
    for parent in ("planner", "build"):
        yolo = chain_of(world, [parent, "yolo"])[1]
        # untrusted: its own allows never count, under either parent
        assert yolo.gate().decide(world.requests("bash", "npm install x")).action != "allow"
        assert yolo.gate().decide(world.requests("edit", "src/a.py")).action != "allow"
        assert yolo.gate().decide(world.requests("webfetch", "https://a.example/")).action \
            == "ask"
        # untrusted, its allow rules say nothing at all: not even todo and task
        assert yolo.gate().judge(Request("todo", "*")).action == "deny"
        assert yolo.gate().judge(Request("task", "explore")).action == "deny"


def test_a_childs_approval_opens_only_what_its_ancestors_do_not_deny(tmp_path):
    """An approval given to a child counts in its ancestors' gates too (the person
    answered for this request), where it can turn an ask into an allow but never
    a configured deny."""
    where = Project(tmp_path)
    where.write(".dm_cc/policy.yaml", """
        agents:
          plan:
            rules: [{permission: task, pattern: "general", action: allow}]
        """)
    world = where.world()
    approved = [Rule("edit", "src/**", "allow", source="approval:session"),
                Rule("bash", "npm install *", "allow", source="approval:session")]
    under_build = chain_of(world, ["build", "general"])
    under_plan = chain_of(world, ["plan", "general"])
    under_build[0].approvals.remember("general", approved, save=False, note="")
    under_plan[0].approvals.remember("general", approved, save=False, note="")
    for tool, text in (("edit", "src/a.py"), ("bash", "npm install left-pad")):
        requests = world.requests(tool, text)
        assert under_build[1].gate().decide(requests).action == "allow"
        assert under_build[0].gate().decide(requests).action == "ask"   # build's own: untouched
        assert under_plan[1].gate().decide(requests).action == "deny"


# --------------------------------------------------------------------------- bugs found


SYMLINKED_SECRET = """
rules:
  - {permission: edit, pattern: "*.md", action: allow}
  - {permission: edit, pattern: "secret/**", action: deny, reason: "secrets stay put"}
"""


def _symlinked_secret(where: Project) -> None:
    where.write(".dm_cc/policy.yaml", SYMLINKED_SECRET)
    where.write("secret/key.txt", "k\n")
    (where.root / "docs").mkdir()
    os.symlink(where.root / "secret" / "key.txt", where.root / "docs" / "notes.md")


def test_an_approval_never_beats_a_configured_deny_on_a_symlinks_target(tmp_path):
    where = Project(tmp_path)
    _symlinked_secret(where)
    world = where.world()
    requests = world.requests("edit", "docs/notes.md")   # names: docs/notes.md, secret/key.txt
    build = world.agent("build")
    assert world.gate(build).decide(requests).action == "deny"
    approval = (Rule("edit", "secret/**", "allow", source="approval:apr_1"),)  # approvals add
    assert world.gate(build, approval).decide(world.requests("edit", "secret/key.txt")) \
        .action == "deny"                                # the target itself: still denied
    assert world.gate(build, approval).decide(requests).action == "deny"


def test_a_childs_approval_never_beats_an_ancestors_deny_through_a_symlink(tmp_path):
    where = Project(tmp_path)
    _symlinked_secret(where)
    world = where.world()
    requests = world.requests("edit", "docs/notes.md")
    assert all(rights.gate().decide(requests).action == "deny"
               for rights in chain_of(world, ["build", "general", "general"]))
    events: list = []
    loop = root_loop(where, "build", events=events)
    loop.rt.approvals.remember("general", [Rule("edit", "secret/**", "allow",
                                                source="approval:session")],
                               save=False, note="")
    loop.rt.model = ScriptedModel(
        [calls(task("child: write", "general")), reply("delegated")],
        tasks={"child: write": [writes("docs/notes.md"), reply("child done")]})
    run(loop, "go")
    assert (where.root / "secret" / "key.txt").read_text() == "k\n"   # fails: "x\n"
    assert results_at(events, 1)["docs/notes.md"][0] is True
