"""What one session's agent may do: its gate, bounded by its lineage, and what
follows from the gate (the tools it is offered, what it may read, which subagents
it may start).

    rights = Rights(policy, agents, approvals, capabilities, session)
    rights.agent                 # the agent in charge (that of the last user message)
    rights.gate()                # compiled once per agent and approvals, then reused
    child = rights.child(child_session)   # a subagent's: bounded by every ancestor

A subagent's gate is the stricter of its own and its parent's, computed for each
request (``Policy.lineage_gate``): the parent's agent when it started the child
bounds it for good, and the agent in charge of the parent's session now does too
(a ``plan_exit`` while a background child works). Approvals count per agent: the
person's answers to the child count in its ancestors' gates as well, where, like
every approval, they never beat a configured deny.

Accept-edits (``accept_edits``) is the session tree's, set on the top session
and read live by every subagent under it: each generation's gate has the layer,
so a child accepts edits exactly when its ancestors do, within its own rights and
every bound (explore still may not edit). It is never saved.

Built from plain parts (no loop), so it is tested on its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dm_cc.agents import Agent
from dm_cc.core.approval import Approvals
from dm_cc.errors import UsageError
from dm_cc.permissions import Gate, PathContextDirs, Request, Rule, path_requests
from dm_cc.policy import Capabilities, Link, Policy
from dm_cc.session import Session, agent_in_charge
from dm_cc.tools import Tool

MAY_READ_CACHE = 4096     # paths a session's gate is asked about before answers are dropped


class Rights:
    """One session's rights (see the module docstring). ``notify`` hears what a
    user should know (saved approvals that cannot be read)."""

    def __init__(self, policy: Policy, agents: Mapping[str, Agent], approvals: Approvals,
                 capabilities: Capabilities, session: Session, *, parent: Rights | None = None,
                 notify: Callable[[str], None] = lambda text: None) -> None:
        self._policy = policy
        self.agents = agents
        self.approvals = approvals
        self.capabilities = capabilities
        self.session = session
        self.parent = parent
        self.notify = notify
        # the parent's agent when it started this child: it bounds the child for good
        self.started_by: Agent | None = parent.agent if parent is not None else None
        self._gate: tuple[tuple[object, ...], Gate] | None = None
        self._accept_edits = False     # the top session's word (see accept_edits)

    @property
    def policy(self) -> Policy:
        """The policy files the gate is made of. A subagent's are its parent's, so what
        the person changes mid-session (``/permissions add``) holds at once for the
        subagents at work too."""
        return self.parent.policy if self.parent is not None else self._policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        self._policy = policy

    @property
    def agent(self) -> Agent:
        """The agent of the last user message of the session."""
        name = agent_in_charge(self.session.messages, self.session.info.agent)
        agent = self.agents.get(name)
        if agent is None:  # its file was removed since: never guess another's rights
            raise UsageError(f"this session's agent {name!r} no longer exists; "
                             "continue it with --agent NAME")
        return agent

    @property
    def accept_edits(self) -> bool:
        """Whether the session tree accepts edits inside the project without asking
        (the REPL's Shift+Tab): the top session's word, for every subagent under it."""
        return self._top()._accept_edits

    @accept_edits.setter
    def accept_edits(self, on: bool) -> None:
        self._top()._accept_edits = on

    def _top(self) -> Rights:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    @property
    def root_session(self) -> str:
        """The id of the session at the top of this one's lineage."""
        return self.top_session.info.id

    @property
    def top_session(self) -> Session:
        """The session at the top of this one's lineage (the one the person talks to)."""
        return self._top().session

    def child(self, session: Session, notify: Callable[[str], None] | None = None) -> Rights:
        """The rights of a subagent working in ``session``, started by this agent."""
        return Rights(self.policy, self.agents, self.approvals, self.capabilities, session,
                      parent=self, notify=notify or self.notify)

    def use(self, capabilities: Capabilities) -> None:
        """What each permission does from now on (a session's MCP tools joined): the
        gate is compiled again."""
        self.capabilities = capabilities
        self._gate = None

    # ------------------------------------------------------------------ the gate

    def gate(self) -> Gate:
        """The compiled layers for the agent in charge; rebuilt when the agent or the
        approvals of it or of an ancestor change."""
        key = self._key()
        for warning in self.approvals.drain_warnings():
            self.notify(warning)
        if self._gate is None or self._gate[0] != key:
            self._gate = (key, self.gate_with(self.approvals.rules(self.agent.name)))
        return self._gate[1]

    def gate_with(self, approvals: Sequence[Rule]) -> Gate:
        """The agent in charge's gate with these approvals, bounded by every ancestor."""
        return self.policy.lineage_gate(self.lineage(approvals), self.capabilities,
                                        accept_edits=self.accept_edits)

    def gate_of(self, agent: Agent) -> Gate:
        """What ``agent`` may do here (``/agent capabilities NAME``): the gate of the
        agent in charge for itself; a subagent-only agent's as a child of the agent
        in charge (bounded by it); another agent's as if it were in charge."""
        if agent.name == self.agent.name:
            return self.gate()
        own = Link(agent, self.approvals.rules(agent.name), self.session.info.id)
        lineage = self.lineage(self.approvals.rules(self.agent.name))
        links = [*lineage, own._replace(session_id=None)] if agent.mode == "subagent" \
            else [*lineage[:-1], own]
        return self.policy.lineage_gate(links, self.capabilities,
                                        accept_edits=self.accept_edits)

    def lineage(self, approvals: Sequence[Rule]) -> list[Link]:
        """The agent in charge with ``approvals``, after each ancestor (outermost
        first) as the agent that started the next generation -- and, when that
        session has switched agent since, the one in charge now as well."""
        links = [Link(self.agent, tuple(approvals), self.session.info.id)]
        node = self
        while node.parent is not None and node.started_by is not None:
            parent, started_by = node.parent, node.started_by
            link = Link(started_by, parent.approvals.rules(started_by.name),
                        parent.session.info.id)
            now = parent.agent
            if now.name != started_by.name:
                link = link._replace(also=((now, parent.approvals.rules(now.name)),))
            links.insert(0, link)
            node = parent
        return links

    def _key(self) -> tuple[object, ...]:
        """What the gate depends on: the policy, the agents and approvals of the lineage."""
        name = self.agent.name
        own: tuple[object, ...] = (self.policy, name, self.approvals.rules(name), self.accept_edits)
        if self.parent is None or self.started_by is None:
            return own
        return (*own, self.approvals.rules(self.started_by.name), self.parent._key())

    # ------------------------------------------------------------------ what follows from it

    def offered(self, tools: Iterable[Tool[Any]]) -> list[Tool[Any]]:
        """The tools whose permission the gate does not deny outright."""
        gate = self.gate()
        return [tool for tool in tools if not gate.denies_outright(tool.entry.permission)]

    def may_start(self, agent: str) -> bool:
        """Whether the gate lets this agent start the subagent ``agent`` (or asks)."""
        return self.gate().judge(Request("task", agent)).action != "deny"

    def may_read(self, where: PathContextDirs) -> Callable[[str], bool]:
        """Whether the read rules allow an absolute path outright (what grep and glob
        leave out of what they show). Only the read rules: the call's own directory
        (``external_directory``) was decided, and approved if it had to be."""
        gate = self.gate()

        @functools.lru_cache(maxsize=MAY_READ_CACHE)
        def may_read(path: str) -> bool:
            return all(gate.judge(request).action == "allow"
                       for request in path_requests("read", path, where)
                       if request.permission == "read")
        return may_read
