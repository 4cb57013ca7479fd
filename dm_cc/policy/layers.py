"""The policy layers (DESIGN.md §3), discovered, loaded and stacked; later wins.

    builtin defaults → managed base → project → user → --policy files
      → (a subagent: todo and task denied) → agent rules → agents: overrides from those files (same order)
      → approvals (can turn ask into allow, never a configured deny or a managed rule)
      → built-in guardrails (deny `rm -rf /` and the like, whatever came before)
      → managed enforced rules (an organisation's last word)

Files: managed ``<managed>/policy.yaml`` + ``policies/*.yaml`` and
``<managed>/enforced.yaml``; project ``.dm_cc/policy.yaml`` +
``.dm_cc/policies/*.yaml``; user ``<config>/policy.yaml`` + ``policies/*.yaml``.

Each layer's name (what ``policy show`` prints, what a verdict's ``layer`` and a
hook's ``layer`` hold) is spelled once, below: ``*_LAYER`` constants, and
:func:`agent_rules_layer` / :func:`agent_overrides_layer` for the per-agent two.

This module only turns files into layers and says which stack bounds which
(:meth:`Policy.gate`); deciding is :class:`dm_cc.permissions.Gate`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple, Protocol

from dm_cc.config import config_dir, managed_dir, project_dir
from dm_cc.permissions import NETWORK, SANDBOX_ESCAPE, Ceiling, Gate, Layer, PathContext, Rule
from dm_cc.policy.defaults import DEFAULT_RULES, SUBAGENT_RULES, guardrail_rules
from dm_cc.policy.effects import Capabilities, Limited, limit_rules, limited
from dm_cc.policy.hooks import Hook, refuse_project_hooks
from dm_cc.policy.loader import PolicyFile, load_policy_file
from dm_cc.policy.shipped import load_policy_arg

BUILTIN_LAYER = "builtin"        # the built-in defaults
MANAGED_LAYER = "managed"        # the organisation's base policy (binding)
PROJECT_LAYER = "project"        # the project's .dm_cc/ files
USER_LAYER = "user"              # the person's own config
EXTRA_LAYER = "--policy"         # files named with --policy (Policy.extra)
SUBAGENT_LAYER = "subagent"      # a child agent's: todo and task denied
APPROVALS_LAYER = "approvals"    # the person's "always allow" answers
GUARDRAILS_LAYER = "guardrails"  # built-in denies nothing before them can open
ENFORCED_LAYER = "enforced"      # the organisation's last word (binding)
HOOK_LAYER = "hook"              # no layer of the stack: a decision hook's verdicts carry it


def agent_rules_layer(agent: str) -> str:
    """The layer of ``agent``'s own rules (``agent:<name>``)."""
    return f"agent:{agent}"


def agent_overrides_layer(agent: str) -> str:
    """The layer of the policy files' ``agents:`` overrides for ``agent`` (``agents.<name>``)."""
    return f"agents.{agent}"


def rights_layer(agent: str) -> str:
    """The one layer of the ceiling derived from what ``agent`` may do (``may:<name>``)."""
    return f"may:{agent}"


#: The layers whose decision hooks may turn an ask into an allow: the person's own
#: files and the organisation's (a project's files may name no hook at all).
TRUSTED_HOOK_LAYERS = frozenset({USER_LAYER, EXTRA_LAYER, MANAGED_LAYER, ENFORCED_LAYER})


UNTRUSTED_AGENT = ("this agent is defined by the project, so its rules may tighten the "
                   "policy, never loosen it: this is what the policy says without them")
SANDBOX_OPENERS = frozenset({NETWORK, SANDBOX_ESCAPE})
PROJECT_SANDBOX = ("a project's policy cannot open the sandbox (the network, or running a "
                   "command outside it): only your own files, the managed policy and your "
                   "answers can")
PROJECT_OVERRIDES = ("the project's agents: overrides cannot overrule your own policy files "
                     "(user config, --policy): their decision stands")


class AgentRules(Limited, Protocol):
    """What the policy needs of an agent (``dm_cc.agents.Agent`` is one): what its
    rights are derived from, and its own rules."""

    @property
    def rules(self) -> tuple[Rule, ...]: ...

    @property
    def trusted(self) -> bool: ...


def _policy_files(directory: Path, main: str = "policy.yaml") -> list[Path]:
    found = []
    if (directory / main).is_file():
        found.append(directory / main)
    extra = directory / "policies"
    if extra.is_dir():
        found.extend(sorted(p for p in extra.iterdir() if p.suffix in (".yaml", ".yml")))
    return found


@dataclass(frozen=True)
class Policy:
    """Every loaded policy file, by layer, and how to stack them for an agent."""

    root: Path
    home: Path
    managed: tuple[PolicyFile, ...] = ()
    project: tuple[PolicyFile, ...] = ()
    user: tuple[PolicyFile, ...] = ()
    extra: tuple[PolicyFile, ...] = ()
    enforced: tuple[PolicyFile, ...] = ()

    @property
    def files(self) -> tuple[PolicyFile, ...]:
        return self.managed + self.project + self.user + self.extra + self.enforced

    @property
    def hooks(self) -> tuple[Hook, ...]:
        """Every file's hooks, each marked with its file's layer, in layer order (a
        project's files have none: :func:`load_policy` refuses them)."""
        return tuple(replace(hook, layer=layer)
                     for layer, files in ((MANAGED_LAYER, self.managed), (USER_LAYER, self.user),
                                          (EXTRA_LAYER, self.extra), (ENFORCED_LAYER, self.enforced))
                     for f in files for hook in f.hooks)

    @property
    def context(self) -> PathContext:
        return PathContext(root=self.root.as_posix(), home=self.home.as_posix())

    def layers(self, agent: AgentRules, approvals: Sequence[Rule] = (),
               session_id: str | None = None, *, trusted_only: bool = False,
               subagent: bool = False) -> list[Layer]:
        """The stack for ``agent``. ``{session}`` in an agent rule's pattern (the plan
        agent's own plan file) becomes the session id, or ``*`` outside a session.
        ``trusted_only`` leaves out what a cloned repository supplies to the agent
        layers: an untrusted agent's own rules and the project files' overrides.
        ``subagent``: the agent runs as a child (the task tool), where ``todo`` and
        ``task`` are denied unless its own rules or overrides allow them."""
        configured = self.managed + self.project + self.user + self.extra
        own_rules = agent.rules
        if trusted_only:
            configured = self.managed + self.user + self.extra
            if not agent.trusted:
                own_rules = ()
        agent_rules = _in_session(own_rules, session_id)
        return [
            Layer(BUILTIN_LAYER, DEFAULT_RULES),
            Layer(MANAGED_LAYER, _top(self.managed), binding=True),
            Layer(PROJECT_LAYER, _top(self.project)),
            Layer(USER_LAYER, _top(self.user)),
            Layer(EXTRA_LAYER, _top(self.extra)),
            # Keeping subagents focused is not a right an agent file could take: an
            # untrusted agent's rules may open todo and task for it like a trusted one's.
            *([Layer(SUBAGENT_LAYER, SUBAGENT_RULES)] if subagent and not trusted_only else []),
            Layer(agent_rules_layer(agent.name), agent_rules),
            Layer(agent_overrides_layer(agent.name), _for_agent(configured, agent.name)),
            Layer(APPROVALS_LAYER, tuple(approvals), approvals=True),
            Layer(GUARDRAILS_LAYER, guardrail_rules(self.home.as_posix())),
            Layer(ENFORCED_LAYER, _top(self.enforced) + _for_agent(self.enforced, agent.name),
                  binding=True),
        ]

    def gate(self, agent: AgentRules, approvals: Sequence[Rule] = (),
             session_id: str | None = None, *, subagent: bool = False,
             capabilities: Capabilities | None = None) -> Gate:
        """The gate for ``agent``: its stack, bounded by what it may do at all and
        by what a cloned repository may not open.

        * an agent that may do less than everything (``may``: the plan agent reads
          only) is bounded by rules derived from what each permission does
          (``capabilities``; :mod:`dm_cc.policy.effects`), whatever its stack says
          (without ``capabilities`` no permission is known to be harmless: such an
          agent is denied everything but its own files -- fail closed);

        and with a ceiling when a cloned repository supplies agent-layer rules,
        which sit after the user's policy:

        * an untrusted (project-defined) agent's own rules can only tighten: every
          decision is the stricter of the stack with and without them;
        * the project files' ``agents:`` overrides may open what built-in agent rules
          close (`docs/**` for plan) but cannot overrule a decision made by the
          user's own files (user config, ``--policy``);
        * nothing a cloned repository supplies (project files, an untrusted agent's
          rules) opens the sandbox: ``network`` and ``sandbox_escape`` are decided
          as if it had written nothing, or stricter.
        """
        gate = Gate(self.layers(agent, approvals, session_id, subagent=subagent), self.context)
        if limited(agent):
            may = Capabilities({}) if capabilities is None else capabilities
            rules = _in_session(limit_rules(agent, may), session_id)
            gate = gate.within(Ceiling(Gate([Layer(rights_layer(agent.name), rules)], self.context),
                                       None, f"no rule can give the {agent.name} agent more"))
        trusted = self.layers(agent, approvals, session_id, trusted_only=True, subagent=subagent)
        if self.project or not agent.trusted:
            # The sandbox's openers (network, sandbox_escape) as if the project had
            # written no rule: a cloned repository may close them, never open them.
            without = [layer._replace(rules=()) if layer.name == PROJECT_LAYER else layer
                       for layer in trusted]
            gate = gate.within(Ceiling(Gate(without, self.context), None, PROJECT_SANDBOX,
                                       SANDBOX_OPENERS))
        if agent.trusted and not _for_agent(self.project, agent.name):
            return gate
        ceiling = Gate(trusted, self.context)
        if not agent.trusted:
            return gate.within(Ceiling(ceiling, None, UNTRUSTED_AGENT))
        return gate.within(Ceiling(ceiling, frozenset({USER_LAYER, EXTRA_LAYER}), PROJECT_OVERRIDES))


    def lineage_gate(self, lineage: Sequence[Link],
                     capabilities: Capabilities | None = None) -> Gate:
        """The gate of the last agent of ``lineage`` (the session's own agent first,
        then each subagent it started, down to this one). A subagent's gate is bounded
        by its parent's gate, itself bounded by the grandparent's, so each decision is
        the stricter of its own and every ancestor's (deny > ask > allow), computed
        for the request, never copied as rules. The child's approvals count in its
        ancestors' gates too -- the person answered for this request -- where, like any
        approval, they never beat a configured deny or a managed rule."""
        *ancestors, own = lineage
        gate = self.gate(own.agent, own.approvals, own.session_id, subagent=bool(ancestors),
                         capabilities=capabilities)
        if not ancestors:
            return gate
        parent = ancestors[-1]
        bounds = [(parent.agent, parent.approvals, "the {} agent that started it"),
                  *((agent, approvals, "its parent's agent now ({})")
                    for agent, approvals in parent.also)]
        for agent, approvals, who in bounds:
            widened = Link(agent, (*approvals, *own.approvals), parent.session_id)
            bound = self.lineage_gate([*ancestors[:-1], widened], capabilities)
            gate = gate.within(Ceiling(bound, None, "a subagent never gets more than "
                                                    + who.format(agent.name)))
        return gate


class Link(NamedTuple):
    """One generation of a lineage: an agent, its approvals, the session it runs in;
    ``also``: other agents (with their approvals) that bound the next generation --
    the agent in charge of this session now, when it is no longer the one that
    started the child (a plan_exit while a background child works)."""

    agent: AgentRules
    approvals: tuple[Rule, ...] = ()
    session_id: str | None = None
    also: tuple[tuple[AgentRules, tuple[Rule, ...]], ...] = ()


def _in_session(rules: Sequence[Rule], session_id: str | None) -> tuple[Rule, ...]:
    """``{session}`` in a pattern (the plan agent's own plan file) becomes the session
    id, or ``*`` outside a session."""
    return tuple(replace(rule, pattern=rule.pattern.replace("{session}", session_id or "*"))
                 for rule in rules)


def _top(files: Sequence[PolicyFile]) -> tuple[Rule, ...]:
    return tuple(rule for f in files for rule in f.rules)


def _for_agent(files: Sequence[PolicyFile], agent: str) -> tuple[Rule, ...]:
    return tuple(rule for f in files for rule in f.agents.get(agent, ()))


def load_policy(root: Path, home: Path, env: Mapping[str, str] = os.environ,
                extra: Sequence[str | Path] = ()) -> Policy:
    """Discover and load every layer's files; the first malformed file raises.
    ``extra``: the ``--policy`` arguments, files or shipped ``builtin:NAME`` policies."""
    managed_at = managed_dir(env)
    extras = tuple(load_policy_arg(spec) for spec in extra)
    enforced = managed_at / "enforced.yaml"
    managed = tuple(load_policy_file(p) for p in _policy_files(managed_at))
    project = tuple(load_policy_file(p) for p in _policy_files(project_dir(root)))
    refuse_project_hooks(project)
    return Policy(
        root=root,
        home=home,
        managed=managed,
        project=project,
        user=tuple(load_policy_file(p) for p in _policy_files(config_dir(env))),
        extra=extras,
        enforced=(load_policy_file(enforced),) if enforced.is_file() else (),
    )
