"""The policy layers (DESIGN.md §3), discovered, loaded and stacked; later wins.

    builtin defaults → (accept-edits: edits inside the project allowed, this session)
      → managed base → project → user → --policy files
      → (a subagent: todo and task denied) → agent rules → agents: overrides from those files (same order)
      → auto (where commands run as transactions only: the shipped ``builtin:auto`` rules for
        an agent in auto mode, then every file's ``auto:`` rules; like approvals, it can turn
        ask into allow, never a configured deny or a managed rule)
      → approvals (can turn ask into allow, never a configured deny or a managed rule)
      → built-in guardrails (deny `rm -rf /` and the like, whatever came before)
      → managed enforced rules (an organisation's last word)

Files: managed ``<managed>/policy.yaml`` + ``policies/*.yaml`` and
``<managed>/enforced.yaml``, any of them delivered from a URL instead
(:mod:`dm_cc.policy.managed`); project ``.dm_cc/policy.yaml`` +
``.dm_cc/policies/*.yaml``; user ``<config>/policy.yaml`` + ``policies/*.yaml``.

Each layer's name (what ``policy show`` prints, what a verdict's ``layer`` and a
hook's ``layer`` hold) is spelled once, below: ``*_LAYER`` constants, and
:func:`agent_rules_layer` / :func:`agent_overrides_layer` for the per-agent two.

This module only turns files into layers and says which stack bounds which
(:meth:`Policy.gate`); deciding is :class:`dm_cc.permissions.Gate`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import NamedTuple, Protocol

from dm_cc.config import (
    ProjectTrust,
    cache_dir,
    config_dir,
    data_dir,
    managed_dir,
    policy_files,
    project_dir,
    state_dir,
)
from dm_cc.errors import PolicyError
from dm_cc.permissions import (
    DELETE,
    REACHING,
    UNIVERSAL_PATHS,
    Ceiling,
    Gate,
    Layer,
    Origin,
    PathContext,
    Protected,
    Rule,
    SecretStore,
    Verdict,
)
from dm_cc.policy.defaults import (
    ACCEPT_EDITS_RULES,
    DEFAULT_RULES,
    SUBAGENT_RULES,
    guardrail_rules,
)
from dm_cc.policy.effects import Capabilities, Limited, limit_rules, limited
from dm_cc.policy.hooks import Hook, refuse_project_hooks
from dm_cc.policy.loader import PolicyFile, load_policy_file
from dm_cc.policy.managed import Delivered, load_managed
from dm_cc.policy.shipped import load_policy_arg
from dm_cc.tools import known_permissions, language_of

BUILTIN_LAYER = "builtin"        # the built-in defaults
ACCEPT_EDITS_LAYER = "accept-edits"  # the REPL's accept-edits mode: changes only the defaults
MANAGED_LAYER = "managed"        # the organisation's base policy (binding)
PROJECT_LAYER = "project"        # the project's .dm_cc/ files
USER_LAYER = "user"              # the person's own config
EXTRA_LAYER = "--policy"         # files named with --policy (Policy.extra)
SUBAGENT_LAYER = "subagent"      # a child agent's: todo and task denied
AUTO_LAYER = "auto"              # auto mode: asks lifted where commands run as transactions
APPROVALS_LAYER = "approvals"    # the person's "always allow" answers
GUARDRAILS_LAYER = "guardrails"  # built-in denies nothing before them can open
ENFORCED_LAYER = "enforced"      # the organisation's last word (binding)
HOOK_LAYER = "hook"              # no layer of the stack: a decision hook's verdicts carry it
OWN_LAYER = "dm_cc"              # a bound, no layer of the stack: dm_cc's own files
OWN_SOURCE = "builtin:own-files"
OWN_FILES = ("dm_cc's own files (your policy, approvals, audit log, sessions) are out of "
             "every tool's reach, whatever the rules say")


def lifted_for_changes(verdict: Verdict, approved: bool) -> bool:
    """Whether an ask is no question for a change of a command that was allowed to
    run (its ``edit`` or ``delete`` request, docs/sandbox.md): it asks only because of
    a catch-all rule (for an edit, or the person approved the command's text -
    ``approved``); never for a protected path, a withheld allow, a hook's ask, or a
    path outside the project. What ``dm_cc policy check`` says of such a change too."""
    request, rule = verdict.request, verdict.rule
    if request.protected or rule.action != "ask" or verdict.layer == HOOK_LAYER:
        return False
    catch_all = rule.permission != request.permission or (
        request.permission == "edit" and rule.pattern in UNIVERSAL_PATHS)
    if request.permission == DELETE:
        return catch_all
    return request.permission == "edit" and (catch_all or approved)


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


AUTO_FROM_PROJECT = ("auto: is not accepted from a project's policy: only your own files, "
                     "--policy files and the managed policy decide what runs without asking")
#: The shipped policy whose ``auto:`` rules an agent in auto mode has in its auto layer.
AUTO_POLICY = "builtin:auto"
TRUST_FROM_PROJECT = ("trust_projects is not accepted from a project's policy: only the "
                      "managed policy and your own files decide whether projects are trusted")
#: The effects a permission reaches beyond the project with: a repository's allow
#: never opens it, trusted or not.
BEYOND_EFFECTS = frozenset({"network", "escape"})


class AgentRules(Limited, Protocol):
    """What the policy needs of an agent (``dm_cc.agents.Agent`` is one): what its
    rights are derived from, its own rules, who wrote them, and whether it runs in
    auto mode (the shipped auto policy's rules in its auto layer)."""

    @property
    def rules(self) -> tuple[Rule, ...]: ...

    @property
    def origin(self) -> Origin: ...

    @property
    def auto(self) -> bool: ...


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
    #: whether the person trusts each project file (the project's files untrusted
    #: when not given: a repository's word counts only once the person says so)
    trust: ProjectTrust | None = None
    #: dm_cc's own per-user directories (config, data, state, cache): out of reach
    own_dirs: tuple[str, ...] = ()
    #: shell commands run as transactions here (each one's effects judged before they
    #: land): only then is the auto layer in effect. False where nothing is known.
    transactional: bool = False
    #: the managed files delivered from a URL: where and when each copy came from
    delivered: tuple[Delivered, ...] = ()

    @property
    def files(self) -> tuple[PolicyFile, ...]:
        return self.managed + self.project + self.user + self.extra + self.enforced

    def managed_origins(self) -> list[str]:
        """Where each managed file came from, for ``policy show``: a file of the managed
        directory (its path), or a URL (its cached copy, when it was fetched, and
        whether the last fetch failed)."""
        copies = {str(d.copy) for d in self.delivered}
        return [*(f"{f.location} (in the managed directory)" for f in self.managed + self.enforced
                  if f.location not in copies),
                *(line for d in self.delivered for line in d.lines())]

    def trusted(self, file: PolicyFile) -> bool:
        """Whether the person trusts the project file ``file`` as it is now."""
        return self.trust is not None and self.trust.trusts(Path(file.location))

    @property
    def protected(self) -> tuple[Protected, ...]:
        """What every file adds to the protected paths (any may add, none remove)."""
        return tuple(entry for f in self.files for entry in f.protected)

    @property
    def secret_stores(self) -> tuple[SecretStore, ...]:
        """What every file adds to the secret stores (any may add, none remove)."""
        return tuple(entry for f in self.files for entry in f.secret_stores)

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
               session_id: str | None = None, *, subagent: bool = False,
               auto: bool | None = None, accept_edits: bool = False) -> list[Layer]:
        """The stack for ``agent``. ``{session}`` in an agent rule's pattern (the plan
        agent's own plan file) becomes the session id, or ``*`` outside a session.
        ``subagent``: the agent runs as a child (the task tool), where ``todo`` and
        ``task`` are denied unless its own rules or overrides allow them. What a
        repository's files say is in layers of their ``origin`` (``repository`` when
        the person trusts the file; ``untrusted``, without its allow rules, when not),
        which the gate lets tighten only, or loosen within the project once trusted.
        ``auto``: whether it runs in auto mode (default: as the agent says); the auto
        layer holds rules only where commands run as transactions (:meth:`auto_rules`).
        ``accept_edits``: the session accepts edits (``ACCEPT_EDITS_RULES``, right after
        the defaults: they change what the defaults decide, nothing a file says)."""
        return [
            Layer(BUILTIN_LAYER, DEFAULT_RULES, origin="builtin"),
            *([Layer(ACCEPT_EDITS_LAYER, ACCEPT_EDITS_RULES)] if accept_edits else []),
            Layer(MANAGED_LAYER, _top(self.managed), binding=True),
            *self._project(PROJECT_LAYER, lambda f: f.rules),
            Layer(USER_LAYER, _top(self.user)),
            Layer(EXTRA_LAYER, _top(self.extra)),
            *([Layer(SUBAGENT_LAYER, SUBAGENT_RULES, origin="builtin")] if subagent else []),
            Layer(agent_rules_layer(agent.name), _spoken(_in_session(agent.rules, session_id),
                                                         agent.origin), origin=agent.origin),
            *self._overrides(agent.name),
            Layer(AUTO_LAYER, self.auto_rules(agent.auto if auto is None else auto)
                  if self.transactional else (), approvals=True),
            Layer(APPROVALS_LAYER, tuple(approvals), approvals=True),
            Layer(GUARDRAILS_LAYER, guardrail_rules(self.home.as_posix()), origin="builtin"),
            Layer(ENFORCED_LAYER, _top(self.enforced) + _for_agent(self.enforced, agent.name),
                  binding=True),
        ]

    def auto_rules(self, auto_mode: bool) -> tuple[Rule, ...]:
        """What the auto layer holds where commands run as transactions: in auto mode,
        the shipped auto policy's rules (unless a ``--policy`` file is that policy:
        once is enough); then every file's ``auto:`` rules, in layer order (a project's
        files have none: :func:`load_policy` refuses them)."""
        files = self.managed + self.user + self.extra + self.enforced
        shipped = shipped_auto() if auto_mode and all(f.path != AUTO_POLICY for f in files) \
            else ()
        return shipped + tuple(rule for f in files for rule in f.auto)

    def _project(self, name: str, rules: Callable[[PolicyFile], tuple[Rule, ...]]) -> list[Layer]:
        """One layer per project file, of the origin the person's trust gives it."""
        layers = []
        for f in self.project:
            origin: Origin = "repository" if self.trusted(f) else "untrusted"
            if said := rules(f):
                layers.append(Layer(name, _spoken(said, origin), origin=origin))
        return layers or [Layer(name, (), origin="repository")]   # (the stack's shape)

    def _overrides(self, agent: str) -> list[Layer]:
        """The files' ``agents:`` overrides for ``agent``, layer by layer in order."""
        name = agent_overrides_layer(agent)
        return [Layer(name, _for_agent(self.managed, agent)),
                *self._project(name, lambda f: f.agents.get(agent, ())),
                Layer(name, _for_agent(self.user + self.extra, agent))]

    def reaching(self, capabilities: Capabilities | None) -> frozenset[str]:
        """The permissions no repository's allow opens: the engine's that reach
        beyond the project, and every one whose effects do (the network, escaping)."""
        if capabilities is None:
            return REACHING
        return REACHING | {permission for permission, effects in capabilities.effects.items()
                           if effects & BEYOND_EFFECTS}

    def gate(self, agent: AgentRules, approvals: Sequence[Rule] = (),
             session_id: str | None = None, *, subagent: bool = False,
             capabilities: Capabilities | None = None, auto: bool | None = None,
             accept_edits: bool = False) -> Gate:
        """The gate for ``agent``: its stack (what a repository says only tightens, or
        loosens within the project once trusted: see :meth:`layers`), bounded by what
        it may do at all: an agent that may do less than everything (``may``: the plan
        agent reads only) is bounded by rules derived from what each permission does
        (``capabilities``; :mod:`dm_cc.policy.effects`), whatever its stack says
        (without ``capabilities`` no permission is known to be harmless: such an
        agent is denied everything but its own files -- fail closed). ``auto``,
        ``accept_edits``: see :meth:`layers`."""
        gate = Gate(self.layers(agent, approvals, session_id, subagent=subagent, auto=auto,
                                accept_edits=accept_edits),
                    self.context, reaching=self.reaching(capabilities))
        if limited(agent):
            may = Capabilities({}) if capabilities is None else capabilities
            rules = _in_session(limit_rules(agent, may), session_id)
            gate = gate.within(Ceiling(Gate([Layer(rights_layer(agent.name), rules)], self.context),
                                       None, f"no rule can give the {agent.name} agent more"))
        if self.own_dirs:
            paths = frozenset(p for p in known_permissions() if language_of(p) == "path")
            gate = gate.within(Ceiling(Gate([Layer(OWN_LAYER, _out_of_reach(self.own_dirs, paths),
                                                   origin="builtin")], self.context),
                                       None, "no rule opens dm_cc's own files", paths))
        return gate

    def lineage_gate(self, lineage: Sequence[Link], capabilities: Capabilities | None = None,
                     *, accept_edits: bool = False) -> Gate:
        """The gate of the last agent of ``lineage`` (the session's own agent first,
        then each subagent it started, down to this one). A subagent's gate is bounded
        by its parent's gate, itself bounded by the grandparent's, so each decision is
        the stricter of its own and every ancestor's (deny > ask > allow), computed
        for the request, never copied as rules. The child's approvals count in its
        ancestors' gates too -- the person answered for this request -- where, like any
        approval, they never beat a configured deny or a managed rule. A subagent runs
        in auto mode when an agent of its lineage does (each bound holds in its own).
        ``accept_edits``: the session at the top accepts edits, and so, within every
        bound, do the subagents under it (each generation's gate has the layer)."""
        *ancestors, own = lineage
        gate = self.gate(own.agent, own.approvals, own.session_id, subagent=bool(ancestors),
                         capabilities=capabilities,
                         auto=any(link.agent.auto for link in lineage), accept_edits=accept_edits)
        if not ancestors:
            return gate
        parent = ancestors[-1]
        bounds = [(parent.agent, parent.approvals, "the {} agent that started it"),
                  *((agent, approvals, "its parent's agent now ({})")
                    for agent, approvals in parent.also)]
        for agent, approvals, who in bounds:
            widened = Link(agent, (*approvals, *own.approvals), parent.session_id)
            bound = self.lineage_gate([*ancestors[:-1], widened], capabilities,
                                      accept_edits=accept_edits)
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


@cache
def shipped_auto() -> tuple[Rule, ...]:
    """The shipped auto policy's ``auto:`` rules (read once)."""
    return load_policy_arg(AUTO_POLICY).auto


def _in_session(rules: Sequence[Rule], session_id: str | None) -> tuple[Rule, ...]:
    """``{session}`` in a pattern (the plan agent's own plan file) becomes the session
    id, or ``*`` outside a session."""
    return tuple(replace(rule, pattern=rule.pattern.replace("{session}", session_id or "*"))
                 for rule in rules)


def _out_of_reach(directories: Sequence[str], permissions: Iterable[str]) -> tuple[Rule, ...]:
    """Everything allowed, but what lies in ``directories`` for ``permissions`` (those
    naming a path: a shell command's paths are such requests too)."""
    return (Rule("*", "*", "allow", source=OWN_SOURCE),
            *(Rule(permission, pattern, "deny", OWN_FILES, OWN_SOURCE)
              for permission in sorted(permissions)
              for directory in directories for pattern in (directory, f"{directory}/**")))


def _spoken(rules: tuple[Rule, ...], origin: Origin) -> tuple[Rule, ...]:
    """What rules of ``origin`` say: an untrusted repository's allow rules say nothing."""
    if origin != "untrusted":
        return rules
    return tuple(rule for rule in rules if rule.action != "allow")


def _top(files: Sequence[PolicyFile]) -> tuple[Rule, ...]:
    return tuple(rule for f in files for rule in f.rules)


def _for_agent(files: Sequence[PolicyFile], agent: str) -> tuple[Rule, ...]:
    return tuple(rule for f in files for rule in f.agents.get(agent, ()))


def load_policy(root: Path, home: Path, env: Mapping[str, str] = os.environ,
                extra: Sequence[str | Path] = (), *, trusted: Mapping[str, str] = {},
                granted: bool = False, transactional: bool = False,
                refresh: bool = True) -> Policy:
    """Discover and load every layer's files; the first malformed file raises.
    ``extra``: the ``--policy`` arguments, files or shipped ``builtin:NAME`` policies.
    ``trusted``: the project files the person trusts (path from the root → digest,
    saved by ``dm_cc trust``); ``granted``: ``--trust-project``, this run trusts them
    as they are. Unless the managed policy or the person's own says
    ``trust_projects: false``, which no project file may say (nor ``auto:``).
    ``transactional``: shell commands run as transactions here (the auto layer is
    in effect); not known here, so the caller says (False: it is not). ``refresh``:
    fetch the managed files delivered from a URL first (a start does, a reload not:
    :mod:`dm_cc.policy.managed`)."""
    extras = tuple(load_policy_arg(spec) for spec in extra)
    managed, enforced, delivered = load_managed(managed_dir(env), state_dir(env),
                                                refresh=refresh)
    user = tuple(load_policy_file(p) for p in policy_files(config_dir(env)))
    project = tuple(load_policy_file(p) for p in policy_files(project_dir(root)))
    refuse_project_hooks(project)
    for f in project:
        for said, why in ((f.trust_projects_source, TRUST_FROM_PROJECT),
                          (f.auto_source, AUTO_FROM_PROJECT)):
            if said:
                raise PolicyError(said.rsplit(":", 1)[0], _line(said), why)
    forbidden = next((f.trust_projects_source for f in (*managed, *enforced, *user, *extras)
                      if f.trust_projects is False), None)
    return Policy(
        root=root,
        home=home,
        managed=managed,
        project=project,
        user=user,
        extra=extras,
        enforced=enforced,
        trust=ProjectTrust.of(root, trusted, forbidden=forbidden, granted=granted),
        own_dirs=tuple(str(where(env)) for where in (config_dir, data_dir, state_dir, cache_dir)),
        transactional=transactional,
        delivered=delivered,
    )


def _line(source: str) -> int | None:
    line = source.rsplit(":", 1)[-1]
    return int(line) if line.isdigit() else None
