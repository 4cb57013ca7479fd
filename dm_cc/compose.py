"""THE composition root: where dm_cc runs, loaded once, as one object every command uses.

    world = open_world(Options(policies=("extra.yaml",)))   # any malformed file raises
    world.agents                      # built-in, user (<config>/agents) and project agents
    world.gate(world.agent("docs"))   # what `policy check --agent docs` and the loop judge with
    world.decide("bash", "git status", "build")  # `policy check`, `explain`, policy tests
    world.open_loop(approver)                    # `dm_cc run`, the interactive session, tests

A World holds the project root, the working and home directories (and the
filesystem the engine resolves paths with), the policy layers, every agent, the
settings and the stores, each loaded once, on first use (``sessions list`` does
not read policy files; everything that judges does). Importing this
module and building a World stay light: ``dm_cc policy …`` never loads litellm,
mcp, prompt_toolkit or the tools' pydantic models; the loop, the model and the
tools are imported by :meth:`World.open_loop` only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from dm_cc.agents import BUILTIN_SUBAGENTS, Agent, configured, load_agents, named_agent
from dm_cc.config import (
    PROJECT_DIR,
    HostFilesystem,
    ProjectFile,
    ProjectTrust,
    config_dir,
    counted,
    data_dir,
    digest,
    display_path,
    find_project,
    home_dir,
    project_dir,
    project_files,
    state_dir,
)
from dm_cc.errors import DmccError, UsageError
from dm_cc.permissions import (
    DEFAULT_PROTECTED,
    DEFAULT_SECRETS,
    Decision,
    Gate,
    PathContextDirs,
    Request,
    Rule,
)
from dm_cc.policy import PROJECT_LAYER, USER_LAYER, Capabilities, Link, Policy, load_policy
from dm_cc.tools import effects_of, input_requests, known_permissions, language_of

if TYPE_CHECKING:
    import logging

    from dm_cc.config import ServerDefinition, Settings, Trust
    from dm_cc.core import Approvals, Approver, Event, Loop
    from dm_cc.llm import ChatModel, OnStream
    from dm_cc.mcp import McpServers
    from dm_cc.policy import Changed, Edit, Finding, NewRule, Place
    from dm_cc.sandbox import Plan, Sandbox
    from dm_cc.session import (
        ApprovalStore,
        AuditLog,
        DecisionExporter,
        SessionStore,
        ToolCall,
        UndoStore,
    )
    from dm_cc.tools import Tool

__all__ = ["DEFAULT_AGENT", "Options", "World", "open_world"]

NO_MODEL = (
    "no model is configured. Pass --model (any litellm model string, e.g. "
    "anthropic/claude-sonnet-4-5 or openai/gpt-4.1, with --api-base for an "
    "OpenAI-compatible server), set DM_CC_MODEL, or put `model:` in "
    f"{PROJECT_DIR}/config.yaml. To try policies without an LLM, use --model offline.")

DEFAULT_AGENT = "build"
LOGGED = 4000      # characters of an event the debug log keeps (--verbose)

PROJECT, USER = PROJECT_LAYER, USER_LAYER   # the layers whose files /permissions add and remove change

# Asked before a project's MCP server that is not approved starts (the REPL asks the
# person); True approves it (saved). None: nobody to ask, it does not start.
# the trust question: a project's server, its trust, what changed since approved
AskTrust = Callable[["ServerDefinition", "Trust", list[str]], bool]


class Options(NamedTuple):
    """What the command line says about a session."""

    agent: str | None = None
    model: str | None = None
    api_base: str | None = None
    policies: tuple[str, ...] = ()
    continue_last: bool = False
    resume: str | None = None
    max_turns: int | None = None
    trust_project: bool = False     # --trust-project: the project's files, as they are, this run
    # whether shell commands run as transactions (their effects judged; the auto layer
    # is in effect only then): None, as the sandbox finds here; True or False, assumed
    # (`dm_cc policy …` judges as where they do, and tries no bubblewrap)
    transactions: bool | None = None
    temperature: float | None = None   # --temperature: for agents that set none
    thinking: int | None = None        # --thinking: a budget of tokens (0: off); None: settings'


class World:
    """Everything dm_cc knows about where it runs (see the module docstring)."""

    def __init__(self, options: Options, cwd: Path, env: Mapping[str, str]) -> None:
        self.options = options
        self.env = env
        self.cwd = cwd.resolve()
        self.home = home_dir(env)
        self.project = find_project(self.cwd, self.home)
        self.root = self.project.root
        self._gates: dict[tuple[str, bool | None, int], Gate] = {}
        self._mcp: McpServers | None = None
        self._mcp_started = False
        self._refreshed = False   # the managed files from a URL: fetched once, at start

    @property
    def root_warnings(self) -> tuple[str, ...]:
        """What every front end that judges says once at start: a ``.dm_cc/`` that is
        not this project's (below its root, or an enclosing repository's), ignored; a
        managed file from a URL whose fetch failed (the last good copy in force)."""
        return self.project.warnings() + tuple(
            said for delivered in self._policy.delivered for said in delivered.notices())

    # ------------------------------------------------------------------ loaded on first use

    @cached_property
    def where(self) -> PathContextDirs:
        """Where paths are read from, and which are protected: the built-in table, what
        the policy files add, and the project's git directories wherever they are; the
        secret stores: the built-in table and what the policy files add."""
        from dm_cc.sandbox import git_dirs

        outside = [d for d in git_dirs(self.root) if not Path(d).is_relative_to(self.root)]
        return PathContextDirs(self.root, self.cwd, self.home, HostFilesystem(),
                               DEFAULT_PROTECTED.with_extra(self.policy.protected, outside),
                               DEFAULT_SECRETS.with_extra(self.policy.secret_stores))

    @cached_property
    def trusted(self) -> Mapping[str, str]:
        """The project's own files the person trusts (path from the root → digest); a
        damaged store trusts nothing, and says so."""
        if not project_files(self.root):
            return {}
        try:
            return self.approvals.trusted_files()
        except DmccError as exc:
            print(f"dm_cc: warning: trusted project files unknown: {exc}", file=sys.stderr)
            return {}

    def trust_notice(self) -> str | None:
        """One line when the project's own files are not all trusted, else None."""
        trust = self.trust
        if not trust.pending:
            return None
        files = ", ".join(repr(f.relative) if not f.relative.isprintable() else f.relative
                          for f, _ in trust.pending)
        if trust.forbidden is not None:
            return (f"the project's own files ({files}) are never trusted here "
                    f"({trust.forbidden}): only their deny and ask rules apply")
        return (f"the project's own files are not trusted ({files}): only their deny and ask "
                "rules apply; `dm_cc trust --show` shows what they would open")

    def asks_trust(self) -> bool:
        """Whether to ask the person to trust the project's own files: something there
        is not trusted, trusting it would open something, and they have not been asked
        about it as it is now (the question comes once per change)."""
        trust = self.trust
        if not trust.asks:
            return False
        try:
            asked = self.approvals.asked_files()
        except DmccError:
            asked = {}
        return any(file.digest is not None and asked.get(file.relative) != file.digest
                   and self.opens(file) for file, _ in trust.pending)

    def opens(self, file: ProjectFile) -> list[str]:
        """What the project file ``file`` would open once trusted, a line each: a policy
        file's allow rules, an agent file's agent and its allow rules, a config file's
        keys (nothing: trusting it changes nothing)."""
        path = self.root / file.relative
        for policy_file in self.policy.project:
            if Path(policy_file.location) == path:
                return [*(_said(rule) for rule in policy_file.rules if rule.action == "allow"),
                        *(f"for agent {agent}: {_said(rule)}"
                          for agent, rules in policy_file.agents.items()
                          for rule in rules if rule.action == "allow")]
        for agent in self.agents.values():
            if agent.source.rsplit(":", 1)[0].endswith(file.relative):
                allows = [_said(rule) for rule in agent.rules if rule.action == "allow"]
                return [f"agent {agent.name}: {agent.description}", *allows] if allows else []
        if path.name == "config.yaml":
            # (its MCP servers are asked about one by one, as they start)
            return [f"config: {line}" for key, line in _top_keys(path) if key != "mcp"]
        return []

    def answer_trust(self, trusted: bool, note: str = "trusted when starting dm_cc") -> None:
        """Save the person's answer: trust the files as they are (a copy of each kept,
        to show what changes later), or remember they were asked about this content
        (the question comes back once it changes)."""
        saved = self.trust.to_save()
        if not trusted:
            self.approvals.asked_about_files(saved, note="asked at start: not now")
            return
        for relative, expected in saved.items():
            try:
                content = (self.root / relative).read_bytes()
            except OSError:
                continue
            if digest(content) == expected:
                self.approvals.keep_copy(expected, content)
        self.approvals.trust_files(saved, note=note)

    def changes(self, file: ProjectFile, most: int = 20) -> list[str]:
        """What changed in ``file`` since the person trusted it, as diff lines (+/-),
        at most ``most``; none when it was never trusted or no copy was kept."""
        trusted = self.trust.saved.get(file.relative)
        if trusted is None or trusted == file.digest:
            return []
        before = self.approvals.copy_of(trusted)
        try:
            now = (self.root / file.relative).read_bytes()
        except OSError:
            return []
        if before is None:
            return []
        import difflib  # only the trust question shows changes: not paid by every command

        diff = [line for line in difflib.unified_diff(
            before.decode("utf-8", "replace").splitlines(),
            now.decode("utf-8", "replace").splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        return diff[:most] + ([f"… and {counted(len(diff) - most, 'more changed line')}"]
                              if len(diff) > most else [])

    @cached_property
    def _policy(self) -> Policy:
        policy = load_policy(self.root, self.home, self.env, self.options.policies,
                             trusted=self.trusted, granted=self.options.trust_project,
                             refresh=not self._refreshed)
        self._refreshed = True
        return policy

    @property
    def trust(self) -> ProjectTrust:
        """Whether the person trusts what the project's own files say (DESIGN.md §10)."""
        assert self._policy.trust is not None, "load_policy always says"
        return self._policy.trust

    @cached_property
    def policy(self) -> Policy:
        """Every policy file of every layer (PolicyError names the first bad line). An
        ``agents:`` entry naming no known agent is a warning on stderr, not an error."""
        policy = self._policy
        if any(f.agents for f in policy.files):
            from dm_cc.policy import beyond_rights, unknown_agents

            for finding in [*unknown_agents(policy.files, self.agents),
                            *beyond_rights(policy.files, self.agents)]:
                print(f"dm_cc: warning: {finding.source}: {finding.message}", file=sys.stderr)
        return policy

    @property
    def transactional(self) -> bool:
        """Whether shell commands run as transactions here, each one's effects judged
        before they land: what the options assume, else what the sandbox finds (it
        tries bubblewrap once). Only then is the auto layer in effect."""
        assumed = self.options.transactions
        return self.sandbox.transactional if assumed is None else assumed

    @cached_property
    def in_force(self) -> Policy:
        """The policy as it holds here: :attr:`policy`, with the auto layer in effect
        where commands run as transactions (:attr:`transactional`)."""
        return replace(self.policy, transactional=self.transactional)

    def auto_mode(self, agent: Agent) -> str | None:
        """None when auto mode has nothing to do with ``agent`` (it does not run in auto
        mode and no file has ``auto:`` rules); else ``effects judged`` where it is in
        effect, or why it is not (commands do not run as transactions here)."""
        if not (agent.auto or self.policy.auto_rules(False)):
            return None
        if self.transactional:
            return "effects judged"
        if self.options.transactions is False:
            return "commands are taken not to run as transactions"
        return self.sandbox.transactions().reason

    def auto_notice(self, agent: Agent) -> str | None:
        """One line when auto mode has to do with ``agent`` but is not in effect here,
        saying why; else None."""
        if self.transactional or (why := self.auto_mode(agent)) is None:
            return None
        return f"auto mode is not in effect: {why}; commands and edits ask as in build"

    @cached_property
    def agents(self) -> Mapping[str, Agent]:
        """Built-in, user and project agents (AgentFileError names the bad line)."""
        return load_agents(self.root, self.env, self.trust.trusts)

    @cached_property
    def settings(self) -> Settings:
        from dm_cc.config import load_settings

        options = self.options
        return load_settings(self.root, self.env, model=options.model,
                             api_base=options.api_base, subagents=BUILTIN_SUBAGENTS,
                             flags={"max_turns": options.max_turns,
                                    "temperature": options.temperature,
                                    "thinking": options.thinking},
                             trusts=self.trust.trusts)

    @cached_property
    def sessions(self) -> SessionStore:
        from dm_cc.session import SessionStore

        return SessionStore(data_dir(self.env) / "sessions")

    @cached_property
    def sandbox(self) -> Sandbox:
        """Where shell commands run: the mode from the user's or the managed config."""
        from dm_cc.sandbox import Sandbox

        settings = self.settings
        return Sandbox(settings.sandbox, self.where, self.env,  # type: ignore[arg-type]
                       why_mode=settings.sources.get("sandbox", "default"))

    @cached_property
    def approvals(self) -> ApprovalStore:
        """The project's saved "always allow" answers (a file in the data dir)."""
        from dm_cc.session import ApprovalStore

        return ApprovalStore.for_project(data_dir(self.env), self.root)

    @cached_property
    def answers(self) -> Approvals:
        """What the person has approved in this process (per agent), over the saved
        approvals: every session this World opens shares it (``/clear`` keeps it)."""
        from dm_cc.core import Approvals

        return Approvals(self.approvals)

    @cached_property
    def audit(self) -> AuditLog:
        """The project's audit log of decisions (a file in the data dir, docs/audit.md)."""
        from dm_cc.session import AuditLog

        return AuditLog.for_project(data_dir(self.env), self.root)

    @cached_property
    def telemetry(self) -> DecisionExporter | None:
        """Where every decision is sent besides the audit log: an OpenTelemetry collector,
        when the ``telemetry`` setting says so (docs/telemetry.md); None: nothing is sent
        (and the SDK is not imported). A protocol it cannot speak is a warning: telemetry
        never stops a session."""
        from dm_cc.session import DecisionExporter, telemetry_config

        try:
            config = telemetry_config(self.settings, self.env)
        except ValueError as exc:
            print(f"dm_cc: warning: telemetry is off: {exc}", file=sys.stderr)
            return None
        return None if config is None else DecisionExporter.start(config)

    @cached_property
    def undo(self) -> UndoStore:
        """What each step of every session changed, kept to undo it (the state dir,
        bounded in size; docs/undo.md)."""
        from dm_cc.session import UndoStore

        return UndoStore(state_dir(self.env) / "undo")

    # ------------------------------------------------------------------ MCP servers

    def mcp_definitions(self) -> list[ServerDefinition]:
        """The MCP servers the settings define and do not disable, in order (an entry
        that is broken is skipped: :meth:`start_mcp` says why)."""
        return [server for server in self.settings.mcp.values()
                if not server.disabled and not server.broken]

    def mcp_trust(self, server: ServerDefinition) -> Trust:
        """Whether ``server`` may start (a project's only once approved)."""
        return server.trust(self.approvals.trusted_servers())

    def start_mcp(self, ask: AskTrust | None = None,
                  notify: Callable[[str], None] = lambda text: None,
                  agent: str | None = None, *, every: bool = True) -> McpServers | None:
        """Start the MCP servers this session may run, in the background, once per
        World (None: none may start; a second call returns what the first started).
        ``every``: begin starting each now (the REPL, ``dm_cc mcp list``); else only
        those whose tools are not known from an earlier listing, the others at their
        first call (``dm_cc run``: a run that calls none starts none). Nothing here
        waits for a server: :meth:`McpServers.listed`, :meth:`McpServers.start`.

        An entry of the settings that is broken is skipped, and ``notify`` says why
        (``file:line``). A project's server that is not approved is put to ``ask``;
        not approved (or nobody to ask), it is not started and ``notify`` says why
        and how to approve it. A server that fails to start is told to ``notify``
        too, from the servers' thread, when it fails.

        Stdio servers run inside the sandbox (the mode permitting), with the spec of
        ``agent``'s policy (the session's; default the default agent) for a server:
        the project writable only if an edit rule allows editing all of it, the
        network as the network rules say (docs/mcp.md, "The sandbox")."""
        if self._mcp_started:
            return self._mcp
        self._mcp_started = True
        from dm_cc.config import STARTING_TRUST

        for server in self.settings.mcp.values():
            if server.broken and not server.disabled:
                notify(f"MCP server {server.name} is skipped: {server.broken}")
        definitions = self.mcp_definitions()
        trusted: dict[str, str] = {}
        if any(server.origin == "project" for server in definitions):
            try:
                trusted = self.approvals.trusted_servers()
            except DmccError as exc:  # a damaged store approves nothing
                notify(f"approved MCP servers unknown: {exc}")
        starting = []
        for server in definitions:
            trust = server.trust(trusted)
            if trust not in STARTING_TRUST:
                changes = server.changes(trusted)
                if ask is None or not ask(server, trust, changes):
                    notify(server.refusal(trust, changes))
                    continue
                try:
                    self.approvals.trust_server(server.name, server.fingerprint,
                                                note=f"approved when starting ({server.source})")
                except DmccError as exc:
                    notify(f"MCP server {server.name} approved for this session only: {exc}")
            starting.append(server)
        if not starting:
            return None
        from dm_cc.config import cache_dir
        from dm_cc.mcp import Listings, McpServers, ServerStatus

        gate = self.server_gate(agent)
        sandbox = self.sandbox

        def confine(argv: list[str], cwd: Path) -> Plan:
            return sandbox.confine(gate, argv, cwd=str(cwd), server=True)

        told: set[str] = set()   # servers whose tools left out were named

        def started(status: ServerStatus) -> None:
            name = status.definition.name
            if status.state != "running":
                notify(f"MCP server {name} did not start: {status.error}")
            elif status.left_out and name not in told:
                told.add(name)
                notify(f"MCP server {name}: tools left out, their names would be too long "
                       f"for the model: {', '.join(status.left_out)}")

        self._mcp = McpServers(starting, self.root, self.env, confine=confine,
                               listings=Listings(cache_dir(self.env) / "mcp-tools", self.root,
                                                 self.env),
                               on_started=started)
        for status in self._mcp.statuses():   # as listed last time
            if status.left_out:
                started(status)
        self._mcp.start_background(unknown_only=not every)
        return self._mcp

    def close(self) -> None:
        """Stop what this World started: the MCP servers and their processes, the
        sandbox's network proxy, the telemetry exporter (within seconds; what it did
        not deliver said on stderr)."""
        if self._mcp is not None:
            self._mcp.close()
        if "sandbox" in self.__dict__:
            self.sandbox.close()
        exporter = self.__dict__.get("telemetry")   # started only if a session opened
        if exporter is not None:
            lost = exporter.close()
            if lost is not None:
                print(f"dm_cc: {lost}", file=sys.stderr)

    # ------------------------------------------------------------------ judging

    def capabilities(self, tools: Sequence[Tool[Any]] = ()) -> Capabilities:
        """What each permission does (the tool catalog's effects, the engine's own, and
        those of ``tools`` and of the MCP servers' tools once started) and what each
        agent may do: what read-only agents' rights are derived from."""
        effects = {permission: effects_of(permission) for permission in known_permissions()}
        running = self._mcp.tools() if self._mcp is not None else []
        effects.update((tool.entry.permission, tool.entry.effects)
                       for tool in (*running, *tools))
        if self.trust.trusted and not self.sandbox.confining:
            # unconfined, a command reaches whatever the person can: a trusted
            # project's allow of one counts for nothing (the gate's "reaching")
            effects.update([(permission, done | {"network", "escape"})
                            for permission, done in effects.items()
                            if language_of(permission) == "shell" and "execute" in done])
        return Capabilities(effects, {name: agent.may for name, agent in self.agents.items()
                                      if agent.mode != "primary"})

    def agent(self, name: str) -> Agent:
        """The agent called ``name``; UsageError naming the known ones."""
        return named_agent(self.agents, name)

    def gate(self, agent: Agent, approvals: Sequence[Rule] = (),
             session_id: str | None = None, under: Sequence[str] = (), *,
             transactional: bool | None = None,
             answers: Mapping[str, Sequence[Rule]] | None = None) -> Gate:
        """The layers in force for ``agent`` (with these approvals, in this session);
        ``under``: as a subagent started by these agents, outermost first;
        ``transactional``: as where commands do (or do not) run as transactions
        (default: as here, :attr:`transactional`); ``answers``: the approvals of each
        agent by name, as a session starts with them (the project's saved ones:
        ``dm_cc policy``), for ``agent`` before ``approvals`` and for each of ``under``."""
        answers = answers or {}
        approvals = (*answers.get(agent.name, ()), *approvals)
        cacheable = not (under or approvals or session_id is not None)
        # the MCP servers' tools count (read-only agents' rights): as they are now
        key = (agent.name, transactional, self._mcp.version if self._mcp is not None else 0)
        if cacheable and key in self._gates:
            return self._gates[key]
        capabilities = self.capabilities()   # the MCP servers' tools, when started, too
        lineage = [Link(self.agent(name), tuple(answers.get(name, ()))) for name in under]
        if transactional is not None:
            policy = replace(self.policy, transactional=transactional)
        elif any(link.agent.auto for link in lineage) or agent.auto or self.policy.auto_rules(False):
            policy = self.in_force
        else:   # no auto layer would hold a rule: nothing to try
            policy = self.policy
        if under:
            return policy.lineage_gate([*lineage, Link(agent, tuple(approvals), session_id)],
                                       capabilities)
        gate = policy.gate(agent, approvals, session_id, capabilities=capabilities)
        if cacheable:
            self._gates[key] = gate
        return gate

    def server_gate(self, agent: str | None = None) -> Gate:
        """The gate an MCP server's sandbox is derived from: ``agent``'s (default the
        default agent), without the auto layer: a server is no transaction, what it
        writes is not judged before it lands."""
        name = agent or self.settings.default_agent or DEFAULT_AGENT
        return self.gate(self.agent(name), transactional=False)

    def requests(self, tool: str, text: str) -> list[Request]:
        """The requests of a ``tool`` call whose main input is ``text``."""
        try:
            return input_requests(tool, text, self.where)
        except LookupError as exc:
            raise UsageError(str(exc.args[0])) from None
        except ValueError as exc:
            raise UsageError(f"{tool}: {exc}") from None

    def decide(self, tool: str, text: str, agent: str = DEFAULT_AGENT,
               under: Sequence[str] = (), *, transactional: bool | None = None,
               answers: Mapping[str, Sequence[Rule]] | None = None) -> tuple[Gate, Decision]:
        """How ``agent`` would decide a ``tool`` call with main input ``text`` (as a
        subagent of the agents ``under``, outermost first; ``transactional`` and
        ``answers``: see :meth:`gate`)."""
        gate = self.gate(self.agent(agent), under=under, transactional=transactional,
                         answers=answers)
        return gate, gate.decide(self.requests(tool, text))

    def consult_hooks(self, gate: Gate, decision: Decision, tool: str, text: str,
                      agent: str = DEFAULT_AGENT) -> Decision:
        """``decision`` with the policy's decision hooks run on its requests, as a
        session of ``agent`` would run them (``dm_cc policy check``)."""
        hooks = self.policy.hooks
        if not hooks:
            return decision
        import asyncio

        from dm_cc.core import CallFacts, consult_hooks
        from dm_cc.tools import entry

        try:
            arguments = entry(tool).arguments(text)
        except (LookupError, ValueError):
            arguments = {}
        facts = CallFacts(tool, text, arguments, agent, None, str(self.cwd))
        return asyncio.run(consult_hooks(decision, hooks, gate, facts))

    # ------------------------------------------------------------------ sessions

    def make_model(self, name: str) -> ChatModel:
        """The model called ``name`` (UsageError for a script that cannot be read)."""
        from dm_cc.llm import make_model

        try:
            return make_model(name, self.settings.api_base, thinking=self.settings.thinking)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def open_loop(self, approver: Approver, *, model: ChatModel | None = None,
                  tools: Sequence[Tool[Any]] | None = None,
                  on_event: Callable[[Event], None] = lambda event: None,
                  on_stream: OnStream | None = None, fresh: bool = False,
                  wait_background: bool = True, ask_trust: AskTrust | None = None,
                  on_output: Callable[[ToolCall, str | None], None] | None = None,
                  start_servers: bool = False) -> Loop:
        """THE loop of a session, as every front end and test gets it: the session the
        options name (resumed, continued or new; ``fresh``: always new), the model the
        options and settings name (or ``model``: a test's), the built-in tools and
        those of the MCP servers it may start (:meth:`start_mcp`, asking
        ``ask_trust``; ``start_servers``: every one now, in the background, else only
        those whose tools are not known yet; :meth:`close` stops them; their tools
        join as they are listed, :class:`SessionTools`) -- or ``tools`` --, the approvals
        saved and given in this process, the sandbox, the audit log, the undo store.
        ``wait_background``: see :class:`~dm_cc.core.loop.Loop`; ``on_output``: what a
        running call prints, as it comes (:class:`~dm_cc.core.runtime.Runtime`). ``continue_last``
        with no earlier session of this project (none with a message) opens a new
        one: its ``messages`` are empty, which is how a front end tells and says so.
        Raises UsageError for an unknown or subagent-only agent or no model."""
        import logging

        from dm_cc.core import Loop, Notice, Runtime
        from dm_cc.llm import WarmsUp
        from dm_cc.session import agent_in_charge
        from dm_cc.tools import builtin_tools

        options, store = self.options, self.sessions
        if fresh:
            session = None
        elif options.resume:
            session = store.load(options.resume)
        elif options.continue_last:
            session = store.continue_latest(self.root)
        else:
            session = None
        if session is not None and not options.agent:
            in_charge = agent_in_charge(session.messages, session.info.agent)
            if in_charge not in self.agents:
                raise UsageError(f"session {session.info.id}'s agent {in_charge!r} no longer "
                                 "exists; continue it with --agent NAME")
        agent = named_agent(self.agents, options.agent or self.settings.default_agent
                            or DEFAULT_AGENT, primary=True)
        if model is None:
            model_name = agent.model or self.settings.model
            if not model_name:
                raise UsageError(NO_MODEL)
            model = self.make_model(model_name)
        if isinstance(model, WarmsUp):   # litellm: imported while the rest loads
            model.warm_up()
        if session is None:
            session = store.create(self.root, agent=agent.name)
        session.warnings[:0] = store.take_warnings()   # a damaged index, found by --continue
        refresh = None
        if tools is None:
            def notify(text: str) -> None:
                on_event(Notice(text))

            servers = self.start_mcp(ask_trust, notify, agent.name, every=start_servers)
            session_tools = SessionTools(self, builtin_tools(), servers, notify)
            tools, capabilities = session_tools.now()
            refresh = session_tools.refresh if servers is not None else None
        else:
            capabilities = self.capabilities(tools)
        if _logger().isEnabledFor(logging.DEBUG):     # --verbose: every event in the log too
            on_event = _logged(on_event)
        settings = self.settings
        runtime = Runtime(policy=self.in_force, agents=configured(self.agents, settings.agents),
                          tools=tools,
                          model=model,
                          approver=approver, where=self.where, refresh=refresh,
                          capabilities=capabilities, on_event=on_event,
                          on_stream=on_stream, on_output=on_output, approvals=self.answers,
                          models=self.make_model,
                          max_task_depth=settings.max_task_depth, max_turns=settings.max_turns,
                          sandbox=self.sandbox, audit=self.audit, undo=self.undo,
                          decisions=() if self.telemetry is None else (self.telemetry,),
                          temperature=settings.temperature)
        requested = agent.name if (options.agent or not session.messages) else None
        return Loop(session, runtime, max_turns=settings.max_turns, agent=requested,
                    wait_background=wait_background)

    # ------------------------------------------------------------------ changing rules and trust
    # (the REPL's /permissions; `dm_cc trust|untrust`, `dm_cc mcp trust|untrust`)

    def rule_file(self, layer: str) -> Path:
        """Where a rule added to ``layer`` (``project`` or ``user``) is written: that
        layer's ``policy.yaml``."""
        if layer not in (PROJECT, USER):
            raise UsageError(f"rules are added to the project's file or yours, not {layer!r}")
        directory = project_dir(self.root) if layer == PROJECT else config_dir(self.env)
        return directory / "policy.yaml"

    def editable_rules(self) -> list[Place]:
        """The rules of the project's files and the person's own, in the order
        ``/permissions`` numbers them (from 1): file by file, line by line."""
        from dm_cc.policy import numbered

        return numbered([*self.policy.project, *self.policy.user])

    def add_rule(self, layer: str, rule: NewRule) -> Changed:
        """Add ``rule`` at the end of ``layer``'s ``policy.yaml`` (made if there is
        none), unless the lint finds a problem it did not find before (then nothing is
        saved: ``saved`` is False and ``findings`` says why). UsageError for a rule
        that would do nothing there; PolicyError naming ``file:line`` for a file that
        does not load. Once saved, the policy is read again (:meth:`reload_policy`)."""
        from dm_cc.policy import Changed, add_rule

        path = self.rule_file(layer)
        self._may_write(layer, path)
        if layer == PROJECT and rule.action == "allow":
            self._allow_applies(path)
        shown = next((f.path for f in self.policy.files if f.location == str(path)),
                     display_path(path))
        edit = add_rule(path, shown, rule)
        findings = self._findings(layer, edit)
        if findings:
            return Changed(edit, False, findings)
        return self._save(layer, edit, findings)

    def remove_rule(self, number: int) -> Changed:
        """Remove the rule ``number`` of :meth:`editable_rules` from its file (what the
        lint then finds that it did not before is said, not a reason to keep it).
        PolicyError when the file changed since this World read it."""
        from dm_cc.policy import remove_rule

        places = self.editable_rules()
        if not 1 <= number <= len(places):
            raise UsageError(f"no rule {number}: /permissions numbers the rules of your "
                             f"files and the project's ({_numbers(len(places))})" if places else
                             "neither your files nor the project's hold a rule")
        place = places[number - 1]
        layer = PROJECT if any(f is place.file for f in self.policy.project) else USER
        path = Path(place.file.location)
        self._may_write(layer, path)
        edit = remove_rule(path, place.file.path, place)
        return self._save(layer, edit, self._findings(layer, edit))

    def _may_write(self, layer: str, path: Path) -> None:
        """A project's policy file is written only where it is, in the project's own
        directory: never through a link a repository planted (it could name any file)."""
        if layer != PROJECT:
            return
        own = project_dir(self.root)
        if own.is_symlink() or path.is_symlink() or \
                not path.resolve().is_relative_to(own.resolve()):
            raise UsageError(f"{display_path(path)} is a link or lies outside {own}: dm_cc "
                             "does not write it; change it by hand")

    def _allow_applies(self, path: Path) -> None:
        """UsageError when an allow rule in the project's file ``path`` would not apply:
        trusting projects is turned off, or the file is not trusted as it is now."""
        trust = self.trust
        if trust.forbidden is not None:
            raise UsageError(f"trusting projects is turned off ({trust.forbidden}): an allow "
                             "rule in the project's files would never apply; add it to your "
                             "own file (--user)")
        try:
            content = path.read_bytes()
        except FileNotFoundError:
            return   # a file the person makes is theirs: trusted (_carry_trust)
        except OSError as exc:
            raise UsageError(f"cannot read {display_path(path)}: {exc}") from None
        relative = path.relative_to(self.root).as_posix()
        if not self.options.trust_project and \
                self.approvals.trusted_files().get(relative) != digest(content):
            raise UsageError(f"this project's files are not trusted, so an allow rule in "
                             f"{relative} would not apply: trust them first (/permissions "
                             "trust), or add it to your own file (--user)")

    def _findings(self, layer: str, edit: Edit) -> list[Finding]:
        """What the lint finds in every file once ``edit`` is made, that it did not before."""
        from dm_cc.policy import findings_of

        policy = self.policy
        at = len(policy.managed) + (len(policy.project) if layer == USER else 0)
        return findings_of(edit, policy.files, at, self.agents)

    def _save(self, layer: str, edit: Edit, findings: list[Finding]) -> Changed:
        from dm_cc.policy import Changed, save

        before = None if edit.before is None else digest(edit.before.encode("utf-8"))
        save(edit)
        trust = self._carry_trust(edit, before) if layer == PROJECT else ""
        try:
            self.reload_policy()
        except DmccError as exc:   # another file, changed by hand since: it is said
            return Changed(edit, True, findings, trust, str(exc))
        return Changed(edit, True, findings, trust)

    def _carry_trust(self, edit: Edit, before: str | None) -> str:
        """The person changed a project file through dm_cc: what they said of its content
        before holds for the new content (``ApprovalStore.carry_file``); what it is now."""
        trust = self.trust
        if trust.forbidden is not None:
            return f"not trusted: trusting projects is turned off ({trust.forbidden})"
        if self.options.trust_project:
            return "trusted for this run (--trust-project)"
        content = edit.after.encode("utf-8")
        after = digest(content)
        relative = edit.path.relative_to(self.root).as_posix()
        try:
            carried = self.approvals.carry_file(relative, before, after,
                                                note="changed with /permissions")
        except DmccError as exc:
            return f"not trusted: its trust could not be kept ({exc})"
        if carried == "trusted":
            self.approvals.keep_copy(after, content)
            return ("trusted: you made it" if before is None   # no "still": it is new
                    else "still trusted: the change is yours")
        if carried == "declined":
            return "not trusted, as you said when asked: its deny and ask rules apply"
        return "not trusted: its deny and ask rules apply (/permissions trust)"

    def reload_policy(self) -> Policy:
        """Read the policy files and the person's trust in the project's again, after
        a change (a rule added, the project trusted): the policy in force from now on.
        A file that does not load raises, and what was loaded before stays. (The
        agents and settings stay as they were loaded: they change at the next start.)"""
        names = ("trusted", "_policy", "policy", "in_force")
        kept = {name: self.__dict__.pop(name) for name in names if name in self.__dict__}
        try:
            self.__dict__["policy"] = self._policy   # (its warnings were said at start)
            in_force = self.in_force
        except BaseException:
            for name in names:
                self.__dict__.pop(name, None)
            self.__dict__.update(kept)
            raise
        self._gates.clear()
        return in_force

    def trust_project(self, note: str) -> int:
        """Trust the project's own files as they are now (saved); how many there are.
        UsageError when trusting projects is turned off."""
        trust = self.trust
        if trust.forbidden is not None:
            raise UsageError(f"trusting projects is turned off ({trust.forbidden})")
        self.answer_trust(True, note=note)
        return len(trust.files)

    def untrust_project(self) -> int:
        """Forget that the project's files are trusted; how many were."""
        return self.approvals.untrust_files()

    def mcp_server(self, name: str) -> ServerDefinition:
        """The MCP server ``name`` of the settings; UsageError naming the known ones."""
        servers = self.settings.mcp
        if name not in servers:
            known = ", ".join(servers) or \
                f"none is configured (mcp.servers in {PROJECT_DIR}/config.yaml)"
            raise UsageError(f"no MCP server {name!r} (known: {known})")
        return servers[name]

    def trust_server(self, name: str, note: str) -> ServerDefinition:
        """Approve the project's MCP server ``name`` as it is defined now (saved; a
        changed definition needs approving again). One of the person's own config
        needs no approval: nothing is saved for it."""
        server = self.mcp_server(name)
        if server.broken:
            raise UsageError(f"MCP server {name} cannot be used: {server.broken}")
        if server.origin != "user":
            self.approvals.trust_server(server.name, server.fingerprint,
                                        note=f"{note} ({server.source})")
        return server

    def untrust_server(self, name: str) -> bool:
        """Forget the approval of the MCP server ``name``; whether there was one."""
        return self.approvals.untrust_server(name)



def _logger() -> logging.Logger:
    """The debug log, written only with --verbose (cli/options.py): logging is imported
    by a session that opens a loop, not by every command that builds a World."""
    import logging

    return logging.getLogger(__name__)


def _logged(on_event: Callable[[Event], None]) -> Callable[[Event], None]:
    """``on_event``, each event written to the debug log first (cut to LOGGED chars)."""
    logger = _logger()

    def log_and_emit(event: Event) -> None:
        logger.debug("event: %s", repr(event)[:LOGGED])
        on_event(event)
    return log_and_emit


class SessionTools:
    """A session's tools: the built-in ones and those its MCP servers offer, which
    change as the servers start in the background (docs/mcp.md, "Starting").

    :meth:`now` gives the tools and what each permission does with them (read-only
    agents' rights), the same objects until the servers' offer changes; the loop
    awaits :meth:`refresh` before each model request, which first waits for the
    servers whose tools are not known yet (saying so), so the model is always told
    every tool."""

    def __init__(self, world: World, builtin: Sequence[Tool[Any]], servers: McpServers | None,
                 notify: Callable[[str], None]) -> None:
        self.world = world
        self.builtin = list(builtin)
        self.servers = servers
        self.notify = notify
        self._now: tuple[int, list[Tool[Any]], Capabilities] | None = None

    def now(self) -> tuple[list[Tool[Any]], Capabilities]:
        version = self.servers.version if self.servers is not None else 0
        if self._now is None or self._now[0] != version:
            tools = [*self.builtin, *(self.servers.tools() if self.servers is not None else [])]
            self._now = (version, tools, self.world.capabilities(tools))
        return self._now[1], self._now[2]

    async def refresh(self) -> tuple[list[Tool[Any]], Capabilities]:
        if self.servers is not None and (waiting := self.servers.unlisted()):
            self.notify(f"waiting for MCP server{'s' if len(waiting) > 1 else ''} "
                        f"{', '.join(waiting)} to list {'their' if len(waiting) > 1 else 'its'} "
                        "tools")
            await self.servers.listed()
        return self.now()


def _numbers(count: int) -> str:
    """The rule numbers there are, as a person would say them: "only 1", "1 to 3"."""
    return "only 1" if count == 1 else f"1 to {count}"


def _said(rule: Rule) -> str:
    """A rule as the trust question shows it: what it does, not where it is."""
    return rule.describe().rsplit(" (", 1)[0]


def _top_keys(path: Path) -> list[tuple[str, str]]:
    """The keys a YAML file sets at its top level with their lines, as written (unparsed:
    it may not load), each line cut at 100 characters."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [(line.split(":", 1)[0].strip(), line.strip()[:100]) for line in text.splitlines()
            if line.strip() and not line.startswith((" ", "\t", "#", "-"))]


def open_world(options: Options | None = None, *, cwd: Path | None = None,
               env: Mapping[str, str] = os.environ) -> World:
    """Load everything for a command run in ``cwd`` (any malformed file raises a
    DmccError naming file:line: dm_cc never runs with half a policy)."""
    return World(options or Options(), cwd or Path(os.getcwd()), env)
