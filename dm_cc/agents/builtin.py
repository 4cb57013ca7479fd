"""The built-in agents and their rules (the "agent rules" layer of DESIGN.md §3).

The auto agent is the build agent in auto mode (``auto``): where commands run
as transactions, asks about its commands and edits are lifted by the auto layer
(``dm_cc.policy``, the shipped ``builtin:auto``); elsewhere it asks as build does.

Agent rules come after every policy file's top-level rules, and a policy file's
``agents:`` overrides after them. What an agent may do at all is data too
(``may``): the plan agent, explore and the reviewer only read, so whatever writes,
runs a program that is not read-only, reaches the network or starts an agent that
does more is denied to them under any rules (``dm_cc.policy.effects``): a global
``edit: allow`` or an ``agents: plan:`` override cannot open them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from dm_cc.config import PLAN_FILE_PATTERN
from dm_cc.errors import UsageError
from dm_cc.permissions import EFFECTS, READS, Action, Effect, Origin, Rule

Mode = Literal["primary", "subagent", "all"]
#: Model calls in one turn when neither the agent (``max_turns:``) nor the settings
#: (``max_turns``, ``--max-turns``) say how many.
DEFAULT_MAX_TURNS = 50


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
    # Who wrote the agent: dm_cc ("builtin"), the person ("person": <config>/agents),
    # or the project (.dm_cc/agents/*.md: "repository" once the person trusts the
    # file, "untrusted" before): a repository's agent rules may tighten the person's
    # policy, loosen it only once trusted, and never beyond the project.
    origin: Origin = "builtin"
    # What the agent may do at all (dm_cc.permissions.rules.Effect): an agent that
    # may only read is denied whatever does more, under any rules
    # (dm_cc.policy.effects), except the files it names in ``may_edit``.
    may: frozenset[Effect] = EFFECTS
    may_edit: tuple[str, ...] = ()
    # Runs in auto mode: where shell commands run as transactions (their effects judged
    # before they land), the shipped auto policy's rules (builtin:auto) lift the asks of
    # its commands and edits, as approvals would (dm_cc.policy: the auto layer); elsewhere
    # it asks as build does. Only dm_cc's own agents (an agent file cannot say it).
    auto: bool = False
    source: str = ""     # where it is defined: builtin:NAME, or its file (and the line of may:)

    def __post_init__(self) -> None:
        if not self.source:
            object.__setattr__(self, "source", f"builtin:{self.name}")

    @property
    def trusted(self) -> bool:
        """False for a project's agent whose file the person has not trusted."""
        return self.origin != "untrusted"


def _rules(agent: str, *specs: tuple[str, str, Action, str | None]) -> tuple[Rule, ...]:
    return tuple(Rule(p, pat, a, reason, f"builtin:{agent}") for p, pat, a, reason in specs)


# The plan agent reads only (its gate's ceiling says so: dm_cc.policy.effects); these
# rules let it write its own plan file without asking, and keep it from planning twice.
PLAN_RULES = _rules(
    "plan",
    ("edit", PLAN_FILE_PATTERN, "allow", "the plan agent writes its plan file"),
    ("plan_enter", "*", "deny", "already planning"),
)

BUILD_PROMPT = """You are the build agent. Make the change the user asks for: read the \
relevant code first, edit precisely, run the project's checks when they exist, and say what \
you changed. For a large or risky change, call plan_enter to plan it first.

""" + """Delegate with the task tool; its description lists the subagents you may start and \
when to use each. Send exploration -- finding where something is defined or used, how a \
feature works, anything that takes several searches -- to explore, which reports back \
briefly instead of flooding this conversation; do a single targeted lookup yourself. Send \
review -- when the user asks for one, and after a substantial change before you report it \
-- to the reviewer. Hand an independent piece of work you can describe completely to \
general. When the user asks only for a plan, call plan_enter: the plan agent writes it for \
their approval. When the user names a subagent ("use the reviewer to ...", "ask explore \
..."), start that one with the task tool."""

AUTO_PROMPT = BUILD_PROMPT + """ Your shell commands run confined, as transactions: \
what a command changes in the project is checked before it lands, and a change the rules do \
not allow is discarded (you are told which and why)."""

PLAN_PROMPT = """You are the plan agent. You may read, search and run read-only commands; \
you may not change anything except your plan file. Explore until you understand the change, \
write a concrete step-by-step plan (files, functions, tests, risks) into the plan file, then \
call plan_exit so the user can approve it. Send broad searches to the explore subagent and \
ask the reviewer to check what the plan builds on, with the task tool."""

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
        # Shift+Tab cycles the primary agents in this order: build → auto → plan (build
        # accepting edits comes between build and auto: ui/slash.py modes)
        Agent("auto", "primary", "Build, asking about almost nothing: commands run confined as "
              "transactions, their effects judged; undo covers edits.",
              prompt=AUTO_PROMPT, auto=True),
        Agent("plan", "primary", "Read-only planning; may write only its plan file.",
              prompt=PLAN_PROMPT, rules=PLAN_RULES, may=READS,
              may_edit=(PLAN_FILE_PATTERN,)),
        # as children, subagents keep no todo list and start no subagents of their own
        # unless their rules say so (dm_cc.policy.defaults.SUBAGENT_RULES)
        Agent("explore", "subagent", "Read-only exploration of the codebase. Use it to find "
              "where something is defined or used, how a feature works, or anything that "
              "takes several searches; it reports files and line numbers.",
              prompt=EXPLORE_PROMPT, may=READS),
        Agent("general", "subagent", "General-purpose subagent for an independent "
              "multi-step task that may edit files and run commands; give it the whole task.",
              prompt=GENERAL_PROMPT),
        Agent("reviewer", "subagent",
              "Read-only code review. Use it to review a diff, a commit or files: when the "
              "user asks for a review, and after a substantial change before reporting it; "
              "it reports findings by severity with file and line.",
              prompt=REVIEWER_PROMPT, may=READS),
    )
}

#: The built-in subagents, whose model, temperature and max_turns the settings may set
#: (``agents.explore.model: …``; an agent file says its own, a primary agent uses the
#: top-level keys).
BUILTIN_SUBAGENTS = tuple(name for name, agent in BUILTIN_AGENTS.items()
                          if agent.mode == "subagent")


def configured(agents: Mapping[str, Agent], settings: Mapping[str, Mapping[str, Any]]
               ) -> dict[str, Agent]:
    """``agents`` with the settings' ``agents.<name>:`` values (model, temperature,
    max_turns) in place of their own; the settings name only built-in subagents."""
    return {name: replace(agent, **settings[name]) if name in settings else agent
            for name, agent in agents.items()}


#: ``@explore find the login code``: a message that starts with a subagent's name (or
#: ``@agent-explore``, as Claude Code writes it) is that subagent's task.
MENTION = re.compile(r"@(?:agent-)?([a-z0-9_-]+)(?:\s+(.*))?", re.DOTALL)


def mentioned(agents: Mapping[str, Agent], text: str) -> tuple[str, str] | None:
    """The subagent a message starts with and the task it gives it; None when it names
    none (``@src/app.py``, ``@someone``: a message like any other). UsageError for a
    primary-only agent (switching is /agent switch) or a mention with no task."""
    match = MENTION.fullmatch(text.strip())
    if match is None or match.group(1) not in agents:
        return None
    agent, task = agents[match.group(1)], (match.group(2) or "").strip()
    if agent.mode == "primary":
        raise UsageError(f"@{agent.name} is not a subagent: /agent switch {agent.name} (or "
                         "Shift+Tab) puts it in charge")
    if not task:
        raise UsageError(f"@{agent.name} needs a task: @{agent.name} find the login code")
    return agent.name, task


def named_agent(agents: Mapping[str, Agent], name: str, *, primary: bool = False) -> Agent:
    """The agent called ``name``; UsageError naming the known ones, and (``primary``)
    for a subagent-only one, which only the task tool starts."""
    agent = agents.get(name)
    if agent is None:
        raise UsageError(f"unknown agent {name!r} (known: {', '.join(agents)})")
    if primary and agent.mode == "subagent":
        raise UsageError(f"{name!r} is a subagent; it runs only through the task tool")
    return agent
