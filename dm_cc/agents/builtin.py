"""The built-in agents and their rules (the "agent rules" layer of DESIGN.md §3).

Agent rules come after every policy file's top-level rules, so a global
``edit: allow`` cannot open the plan agent; only a policy file's ``agents:``
override for that agent can.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from dm_cc.config.dirs import PLAN_FILE_PATTERN
from dm_cc.errors import UsageError
from dm_cc.permissions import Action, Rule
from dm_cc.policy.defaults import READ_ONLY_COMMANDS

Mode = Literal["primary", "subagent", "all"]


@dataclass(frozen=True, slots=True)
class Agent:
    name: str
    mode: Mode
    description: str
    prompt: str = ""
    rules: tuple[Rule, ...] = ()
    model: str | None = None
    temperature: float | None = None
    max_turns: int | None = None
    # False for agents defined by the project (.dm_cc/agents/*.md): a cloned
    # repository's agent rules may tighten the user's policy, never loosen it.
    trusted: bool = True
    # A read-only subagent that denies mcp__* may still use the MCP tools whose
    # server marks them read-only (see with_read_only_tools).
    read_only_mcp: bool = False


def _rules(agent: str, *specs: tuple[str, str, Action, str | None]) -> tuple[Rule, ...]:
    return tuple(Rule(p, pat, a, reason, f"builtin:{agent}") for p, pat, a, reason in specs)


def _read_only(agent: str, why: str) -> tuple[Rule, ...]:
    return _rules(
        agent,
        ("edit", "*", "deny", why),
        ("bash", "*", "deny", why),
        *(("bash", command, "allow", "read-only command") for command in READ_ONLY_COMMANDS),
    )


PLAN_RULES = _read_only("plan", "the plan agent is read-only; plan_exit switches to build") + _rules(
    "plan",
    ("edit", PLAN_FILE_PATTERN, "allow", "the plan agent writes its plan file"),
    ("task", "*", "deny", "the plan agent only delegates to read-only subagents"),
    ("task", "explore", "allow", None),
    ("task", "reviewer", "allow", None),
    ("plan_enter", "*", "deny", "already planning"),
)

def _only_reads(agent: str, why: str) -> tuple[Rule, ...]:
    """Read-only, and nothing but reading: no edits, only read-only shell commands,
    no web, no MCP tools, no todo list, no subagents, no mode switches. Reading and
    searching stay as the policy decides (a read rule here would overrule its
    denies)."""
    return _read_only(agent, why) + _rules(
        agent,
        *((permission, "*", "deny", why)
          for permission in ("webfetch", "mcp__*", "todo", "task", "plan_enter", "plan_exit")),
    )


EXPLORE_RULES = _only_reads("explore", "the explore agent only reads")
REVIEWER_RULES = _only_reads("reviewer", "the reviewer only reads and reports")


BUILD_PROMPT = """You are the build agent. Make the change the user asks for: read the \
relevant code first, edit precisely, run the project's checks when they exist, and say what \
you changed. For a large or risky change, call plan_enter to plan it first."""

PLAN_PROMPT = """You are the plan agent. You may read, search and run read-only commands; \
you may not change anything except your plan file. Explore until you understand the change, \
write a concrete step-by-step plan (files, functions, tests, risks) into the plan file, then \
call plan_exit so the user can approve it."""

EXPLORE_PROMPT = """You are the explore subagent: answer the question you were given by \
reading and searching the codebase. You cannot change anything. Reply with a concise report \
naming files and line numbers."""

REVIEWER_PROMPT = """You are the reviewer subagent: review the change or the files you were \
given. Read the diff (`git diff`, `git diff --staged`, `git show`) and the code around it; \
you cannot change anything. Report each finding with its file and line, grouped by severity: \
critical (wrong results, data loss, security), major (bugs in edge cases, missing tests), \
minor (clarity, naming, style). Say so plainly when you find nothing."""

GENERAL_PROMPT = """You are a general-purpose subagent: do the task you were given and reply \
with a concise report of what you did and found."""

BUILTIN_AGENTS: dict[str, Agent] = {
    agent.name: agent
    for agent in (
        Agent("build", "primary", "Default agent: reads, edits and runs commands as policy allows.",
              prompt=BUILD_PROMPT),
        Agent("plan", "primary", "Read-only planning; may write only its plan file.",
              prompt=PLAN_PROMPT, rules=PLAN_RULES),
        Agent("explore", "subagent", "Fast read-only exploration of the codebase.",
              prompt=EXPLORE_PROMPT, rules=EXPLORE_RULES, read_only_mcp=True),
        Agent("general", "subagent", "General-purpose subagent for multi-step tasks.",
              prompt=GENERAL_PROMPT),  # as a child: all tools but todo and task
        Agent("reviewer", "subagent",
              "Read-only review of a diff or files; reports findings by severity.",
              prompt=REVIEWER_PROMPT, rules=REVIEWER_RULES, read_only_mcp=True),
    )
}

READ_ONLY_MCP = "the MCP server marks this tool read-only (readOnlyHint)"


def with_read_only_tools(agents: Mapping[str, Agent], names: Sequence[str]) -> dict[str, Agent]:
    """``agents``, where each ``read_only_mcp`` agent also allows the MCP tools
    ``names`` (those whose server says ``readOnlyHint: true``): an allow rule for
    each exact name after the agent's own ``mcp__*`` deny. Such agents are
    subagents, always bounded by the agent that started them, so this lets one use
    a read-only MCP tool exactly as far as its parent may, never further; a policy
    file's ``agents:`` override still comes after and may deny it again."""
    if not names:
        return dict(agents)
    opened = tuple(Rule(name, "*", "allow", READ_ONLY_MCP, "mcp:readOnlyHint") for name in names)
    return {name: replace(agent, rules=agent.rules + opened) if agent.read_only_mcp else agent
            for name, agent in agents.items()}


def named_agent(agents: Mapping[str, Agent], name: str, *, primary: bool = False) -> Agent:
    """The agent called ``name``; UsageError naming the known ones, and (``primary``)
    for a subagent-only one, which only the task tool starts."""
    agent = agents.get(name)
    if agent is None:
        raise UsageError(f"unknown agent {name!r} (known: {', '.join(agents)})")
    if primary and agent.mode == "subagent":
        raise UsageError(f"{name!r} is a subagent; it runs only through the task tool")
    return agent
