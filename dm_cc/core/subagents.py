"""Subagents: what the task tool starts, in child sessions (DESIGN.md §5).

    loop.subagents.start(TaskParams(...)) -> ToolOutput    # what the task tool runs

A child is a :class:`~dm_cc.core.loop.Loop` of its own over a new persisted
session (``parent_id`` set, title ``<description> (@<agent>)``) whose history
starts with the prompt alone: it never sees its parent's messages. It shares the
parent's approver (so its asks reach the same person, or the same ``--on-ask``
answer), its approvals and its tools; it has its own agent's prompt and rules,
and its gate is bounded by its parent's (:class:`~dm_cc.core.rights.Rights`), so
by every ancestor's. The parent's loop hands this module a ``spawn`` callable that
makes the child's loop; nothing here reads or changes another loop.

What comes back to the parent: ``task_id: <id>`` and ``<task_result>`` holding the
child's final text; a child that fails or is cancelled becomes a tool error. A
person who rejects a child's call without feedback (or presses Ctrl-C at its
question) stops the parent's turn too, as they would at the top level.
``max_turns`` asks for at most that many model calls; what the child gets is the
smallest of that, its agent's ``max_turns`` and the settings' (``max_turns``,
``--max-turns``), the default when none is set, and the parent is told the bound
it got when it asked for one (a bigger request is lowered, never refused).
``background: true`` returns the task id at once; the result reaches the parent
as a synthetic message before its next model call (and a loop that waits for its
children, as a headless run and a child do, waits for it before it ends).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from dm_cc.agents import DEFAULT_MAX_TURNS, Agent
from dm_cc.core.approval import AskFailed
from dm_cc.core.events import (
    Event,
    InTask,
    TaskFinished,
    TaskStarted,
    ToolDecided,
    ToolFinished,
)
from dm_cc.core.settle import TurnStopped
from dm_cc.errors import DmccError
from dm_cc.llm import Usage
from dm_cc.session import Session, SessionStore, ToolCall, new_id
from dm_cc.tools import TaskParams, ToolOutput

RESUME_HINT = "(pass it as task_id to continue this task with its history)"


@dataclass
class Running:
    """A child at work: for ``/tasks`` and the progress line."""

    task_id: str
    label: str
    agent: str
    description: str
    background: bool
    turns: int = DEFAULT_MAX_TURNS                      # the most model calls of its turn
    told: str = ""                                      # what the parent is told of them
    started: float = field(default_factory=time.monotonic)
    finished: int = 0                                   # tool calls that have ended
    deciding: set[str] = field(default_factory=set)     # ids of those decided, not ended
    job: asyncio.Task[ToolOutput] | None = None

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    @property
    def tools(self) -> int:
        """Its tool calls so far, those running included: a call counts once decided."""
        return self.finished + len(self.deciding)

    def saw(self, event: Event) -> None:
        """Count the calls of one of its own events."""
        if isinstance(event, ToolDecided):
            self.deciding.add(event.call.id)
        elif isinstance(event, ToolFinished):
            self.deciding.discard(event.call.id)
            self.finished += 1


class Child(Protocol):
    """What a parent needs of a subagent's loop."""

    @property
    def session(self) -> Session: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def subagents(self) -> Subagents: ...

    async def run(self, prompt: str) -> _Result: ...


class _Result(Protocol):
    @property
    def reason(self) -> str: ...

    @property
    def text(self) -> str: ...


#: Makes a subagent's loop: the agent to run, its session, its label, where its
#: events go and the most model calls of its turn (the parent's loop supplies it:
#: its tools, model and rights).
Spawn = Callable[[Agent, Session, str, Callable[[Event], None], int], Child]


class Subagents:
    """One loop's children: the task tool's side of the loop. ``spawn`` makes a
    child's loop; ``may_start(name)`` says whether the agent in charge may start
    that subagent; ``depth`` is the loop's (0 for a session's own) and no child is
    started at ``max_depth``; ``numbers`` is shared by a whole session tree, so
    labels stay unique among all descendants; ``max_turns``: the settings' bound on a
    child's turn (None: only its agent's, else the default)."""

    def __init__(self, spawn: Spawn, agents: Mapping[str, Agent], may_start: Callable[[str], bool],
                 session: Session, *, on_event: Callable[[Event], None], depth: int = 0,
                 max_depth: int = 3, numbers: Iterator[int] | None = None,
                 max_turns: int | None = None) -> None:
        self.spawn = spawn
        self.agents = agents
        self.may_start = may_start
        self.session = session
        self.on_event = on_event
        self.depth = depth
        self.max_depth = max_depth
        self.max_turns = max_turns
        self.numbers: Iterator[int] = numbers if numbers is not None else itertools.count(1)
        self.running: dict[str, Running] = {}
        self.finished: list[str] = []      # background results not yet shown to the model
        self.usage = Usage()               # of every child that finished (the session's cost)
        self._arrival: asyncio.Event | None = None  # made when first waited on

    # ------------------------------------------------------------------ what may start

    def known(self) -> Mapping[str, str]:
        """Every agent that can run as a subagent (mode subagent or all)."""
        return {name: agent.description for name, agent in self.agents.items()
                if agent.mode != "primary"}

    def choices(self) -> Mapping[str, str]:
        """Those the agent in charge may start: the gate does not deny ``task NAME``."""
        return {name: description for name, description in self.known().items()
                if self.may_start(name)}

    # ------------------------------------------------------------------ starting

    async def start(self, params: TaskParams, call_id: str = "") -> ToolOutput:
        limit = self.max_depth
        if self.depth >= limit:
            return ToolOutput(
                f"Subagents nest at most {limit} deep and this one is at depth {self.depth}: "
                "do this part yourself (max_task_depth in the settings).", is_error=True)
        agent = self.agents[params.subagent_type]
        try:
            session, resumed = self._session(params, agent)
        except DmccError as exc:
            return ToolOutput(str(exc), is_error=True)
        label = f"{agent.name} #{next(self.numbers)}"
        turns, told = self.turns(agent, params.max_turns)
        work = Running(session.info.id, label, agent.name, params.description, params.background,
                       turns, told)
        child = self.spawn(agent, session, label, self._relay(work), turns)
        self.running[work.task_id] = work
        self.on_event(TaskStarted(work.task_id, label, work.agent, params.description,
                                  params.background, resumed, call_id))
        if not params.background:
            return await self._run(child, work, params.prompt)
        work.job = asyncio.ensure_future(self._run(child, work, params.prompt))
        work.job.add_done_callback(lambda job: self._arrived(work, job))
        told = f"{work.told}\n" if work.told else ""
        return ToolOutput(f"task_id: {work.task_id} {RESUME_HINT}\n{told}The {work.agent} "
                          "subagent is working in the background; its result will arrive in a "
                          "message when it finishes. Go on with other work meanwhile.")

    def turns(self, agent: Agent, asked: int | None) -> tuple[int, str]:
        """The most model calls ``agent``'s child may make in its turn (the smallest
        of ``asked``, the agent's max_turns and the settings'), and what the model
        that asked is told of it (nothing when it asked for none)."""
        limits = [(limit, why) for limit, why in (
            (agent.max_turns, f"the {agent.name} agent's own max_turns"),
            (self.max_turns, "the max_turns setting")) if limit is not None]
        ceiling, why = min(limits, default=(DEFAULT_MAX_TURNS, "the default"),
                           key=lambda limit: limit[0])
        if asked is None:
            return ceiling, ""
        if asked <= ceiling:
            return asked, f"max_turns: {asked}, as asked."
        return ceiling, (f"max_turns: {ceiling}, not the {asked} asked for: {ceiling} is the "
                         f"most the {agent.name} subagent may take here ({why}).")

    def _session(self, params: TaskParams, agent: Agent) -> tuple[Session, bool]:
        """The child's session: the one ``task_id`` names (a task of this session, of
        this agent, not running), else a new one; and whether it is resumed."""
        store = SessionStore(self.session.path.parent)
        if not params.task_id:
            return store.create(self.session.info.project, parent_id=self.session.info.id,
                                title=f"{params.description} (@{agent.name})",
                                agent=agent.name), False
        if params.task_id in self.running:
            raise DmccError(f"task {params.task_id} is still running; wait for its result")
        session = store.load(params.task_id)
        if session.info.parent_id != self.session.info.id:
            raise DmccError(f"{params.task_id} is not a task of this session")
        if session.info.agent != agent.name:
            raise DmccError(f"task {params.task_id} is a {session.info.agent} task, "
                            f"not {agent.name}")
        return session, True

    def _relay(self, work: Running) -> Callable[[Event], None]:
        parent = self.on_event

        def relay(event: Event) -> None:
            work.saw(event)
            parent(InTask(work.task_id, work.label, event))
        return relay

    async def _run(self, child: Child, work: Running, prompt: str) -> ToolOutput:
        """Run the child's turn; its outcome as the parent's tool result."""
        status, output = "error", ToolOutput("", is_error=True)
        try:
            result = await child.run(prompt)
            status = result.reason
            output = _outcome(work, result.reason, result.text)
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        except AskFailed:
            status = "stopped"
            raise
        except Exception as exc:  # a model error or a bug: the parent is told, and goes on
            output = ToolOutput(f"task_id: {work.task_id}\nThe {work.agent} subagent failed: "
                                f"{type(exc).__name__}: {exc}", is_error=True)
        finally:
            child.subagents.cancel_all()    # its own background children end with it
            self.running.pop(work.task_id, None)
            self.usage = self.usage + child.usage   # the session's cost includes it
            self.on_event(TaskFinished(work.task_id, work.label, status, output.output,
                                       work.tools, work.seconds, work.background))
        if status in ("rejected", "cancelled") and not work.background:
            raise TurnStopped(status, "")  # the person stopped it: stop the parent too
        return output

    # ------------------------------------------------------------------ background

    def _arrived(self, work: Running, job: asyncio.Task[ToolOutput]) -> None:
        if job.cancelled():
            text = "It was cancelled."
        elif (error := job.exception()) is not None:
            text = f"It stopped: {error}"
        else:
            text = job.result().output
        self.finished.append(f"The background task {work.task_id} ({work.label}: "
                             f"{work.description}) has finished.\n{text}")
        if self._arrival is not None:
            self._arrival.set()

    def waiting(self) -> bool:
        """Are background children still at work?"""
        return any(work.background for work in self.running.values())

    async def next_finished(self) -> None:
        """Wait until a background child finishes (its result is then in ``finished``)."""
        arrival = self._arrival = self._arrival or asyncio.Event()
        while self.waiting() and not self.finished:
            arrival.clear()
            await arrival.wait()

    def take_finished(self) -> list[str]:
        taken, self.finished = self.finished, []
        return taken

    def cancel(self, task_id: str) -> bool:
        """Cancel a background child (``/tasks cancel``); False when none runs by that id."""
        work = self.running.get(task_id)
        if work is None or work.job is None:
            return False
        work.job.cancel()
        return True

    def cancel_all(self) -> None:
        for work in list(self.running.values()):
            if work.job is not None:
                work.job.cancel()


def task_call(subagent: str, task: str) -> ToolCall:
    """The task call a message naming ``subagent`` stands for (``@explore find the
    login code``: ``agents.mentioned``), made as the model's would be."""
    words = task.split()
    description = " ".join(words[:6]) + (" …" if len(words) > 6 else "")
    arguments = {"description": description, "prompt": task, "subagent_type": subagent}
    return ToolCall(new_id("call"), "task", arguments, json.dumps(arguments))


def _outcome(work: Running, reason: str, text: str) -> ToolOutput:
    head = f"task_id: {work.task_id} {RESUME_HINT}" + (f"\n{work.told}" if work.told else "")
    if reason == "done":
        return ToolOutput(f"{head}\n\n<task_result>\n{text}\n</task_result>")
    if reason == "max_turns":
        return ToolOutput(f"{head}\nThe {work.agent} subagent reached its turn limit "
                          f"({work.turns} model calls) before finishing.\n\n<task_result>\n"
                          f"{text}\n</task_result>", is_error=True)
    if reason == "rejected":
        return ToolOutput(f"{head}\nThe user rejected a call of the {work.agent} subagent and "
                          "stopped it.", is_error=True)
    return ToolOutput(f"{head}\nThe {work.agent} subagent was cancelled.", is_error=True)

