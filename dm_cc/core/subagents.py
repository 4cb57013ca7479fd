"""Subagents: what the task tool starts, in child sessions (DESIGN.md §5).

    loop.subagents.start(TaskParams(...)) -> ToolOutput    # what the task tool runs

A child is a :class:`~dm_cc.core.loop.Loop` of its own over a new persisted
session (``parent_id`` set, title ``<description> (@<agent>)``) whose history
starts with the prompt alone: it never sees its parent's messages. It shares the
parent's approver (so its asks reach the same person, or the same ``--on-ask``
answer), its approvals and its tools; it has its own agent's prompt and rules,
and its gate is bounded by its parent's (``Loop.gate_with``), so by every
ancestor's.

What comes back to the parent: ``task_id: <id>`` and ``<task_result>`` holding the
child's final text; a child that fails or is cancelled becomes a tool error. A
person who rejects a child's call without feedback (or presses Ctrl-C at its
question) stops the parent's turn too, as they would at the top level.
``background: true`` returns the task id at once; the result reaches the parent
as a synthetic message before its next model call (and a loop that waits for its
children, as a headless run and a child do, waits for it before it ends).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dm_cc.core.approval import AskFailed
from dm_cc.core.events import Event, InTask, TaskFinished, TaskStarted, ToolFinished
from dm_cc.errors import DmccError
from dm_cc.permissions import Request, Rule
from dm_cc.policy.layers import Link
from dm_cc.session.store import SessionStore
from dm_cc.tools.base import ToolOutput
from dm_cc.tools.task import TaskParams

if TYPE_CHECKING:
    from dm_cc.core.loop import Loop

RESUME_HINT = "(pass it as task_id to continue this task with its history)"


@dataclass
class Running:
    """A child at work: for ``/tasks`` and the progress line."""

    task_id: str
    label: str
    agent: str
    description: str
    background: bool
    started: float = field(default_factory=time.monotonic)
    tools: int = 0
    job: asyncio.Task[ToolOutput] | None = None

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


class Subagents:
    """One loop's children: the task tool's side of the loop."""

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self.running: dict[str, Running] = {}
        self.finished: list[str] = []      # background results not yet shown to the model
        self._arrival: asyncio.Event | None = None  # made when first waited on
        # one numbering per session tree: labels stay unique among all descendants
        self._numbers: Iterator[int] = (loop.parent.subagents._numbers if loop.parent is not None
                                        else itertools.count(1))

    # ------------------------------------------------------------------ what may start

    def known(self) -> Mapping[str, str]:
        """Every agent that can run as a subagent (mode subagent or all)."""
        return {name: agent.description for name, agent in self.loop.rt.agents.items()
                if agent.mode != "primary"}

    def choices(self) -> Mapping[str, str]:
        """Those the agent in charge may start: the gate does not deny ``task NAME``."""
        gate = self.loop.gate()
        return {name: description for name, description in self.known().items()
                if gate.judge(Request("task", name)).action != "deny"}

    # ------------------------------------------------------------------ starting

    async def start(self, params: TaskParams, call_id: str = "") -> ToolOutput:
        loop = self.loop
        limit = loop.rt.max_task_depth
        if loop.depth >= limit:
            return ToolOutput(
                f"Subagents nest at most {limit} deep and this one is at depth {loop.depth}: "
                "do this part yourself (max_task_depth in the settings).", is_error=True)
        try:
            child, resumed = self._child(params)
        except DmccError as exc:
            return ToolOutput(str(exc), is_error=True)
        task_id = child.session.info.id
        work = Running(task_id, child.label, params.subagent_type, params.description,
                       params.background)
        child.rt.on_event = self._relay(work)
        self.running[task_id] = work
        loop.rt.on_event(TaskStarted(task_id, work.label, work.agent, params.description,
                                     params.background, resumed, call_id))
        if not params.background:
            return await self._run(child, work, params.prompt)
        work.job = asyncio.ensure_future(self._run(child, work, params.prompt))
        work.job.add_done_callback(lambda job: self._arrived(work, job))
        return ToolOutput(f"task_id: {task_id} {RESUME_HINT}\nThe {work.agent} subagent is "
                          "working in the background; its result will arrive in a message "
                          "when it finishes. Go on with other work meanwhile.")

    def _child(self, params: TaskParams) -> tuple[Loop, bool]:
        loop = self.loop
        store = SessionStore(loop.session.path.parent)
        agent = loop.rt.agents[params.subagent_type]
        if params.task_id:
            if params.task_id in self.running:
                raise DmccError(f"task {params.task_id} is still running; wait for its result")
            session = store.load(params.task_id)
            if session.info.parent_id != loop.session.info.id:
                raise DmccError(f"{params.task_id} is not a task of this session")
            if session.info.agent != agent.name:
                raise DmccError(f"task {params.task_id} is a {session.info.agent} task, "
                                f"not {agent.name}")
        else:
            session = store.create(loop.rt.where.root, parent_id=loop.session.info.id,
                                   title=f"{params.description} (@{agent.name})",
                                   agent=agent.name)
        label = f"{agent.name} #{next(self._numbers)}"
        return loop.child(session, agent, label), params.task_id is not None

    def _relay(self, work: Running) -> Callable[[Event], None]:
        parent = self.loop.rt.on_event

        def relay(event: Event) -> None:
            if isinstance(event, ToolFinished):
                work.tools += 1
            parent(InTask(work.task_id, work.label, event))
        return relay

    async def _run(self, child: Loop, work: Running, prompt: str) -> ToolOutput:
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
            self.loop.usage = self.loop.usage + child.usage   # the session's cost includes it
            self.loop.rt.on_event(TaskFinished(work.task_id, work.label, status, output.output,
                                               work.tools, work.seconds, work.background))
        if status in ("rejected", "cancelled") and not work.background:
            from dm_cc.core.loop import TurnStopped  # the person stopped it: stop the parent too

            raise TurnStopped(status, "")
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


def lineage(loop: Loop, approvals: Sequence[Rule]) -> list[Link]:
    """``loop``'s agent in charge with ``approvals``, after each ancestor (outermost
    first) as the agent that started the next generation -- and, when that session
    has switched agent since, the one in charge now as well: both bound it."""
    links = [Link(loop.agent, tuple(approvals), loop.session.info.id)]
    node = loop
    while node.parent is not None and node.started_by is not None:
        parent, started_by = node.parent, node.started_by
        link = Link(started_by, parent.rt.approvals.rules(started_by.name),
                    parent.session.info.id)
        now = parent.agent
        if now.name != started_by.name:
            link = link._replace(also=((now, parent.rt.approvals.rules(now.name)),))
        links.insert(0, link)
        node = parent
    return links


def lineage_key(loop: Loop) -> tuple[object, ...]:
    """What ``loop``'s gate depends on: the agents and approvals of its lineage."""
    name = loop.agent.name
    own = (name, loop.rt.approvals.rules(name))
    if loop.parent is None or loop.started_by is None:
        return own
    return (*own, loop.rt.approvals.rules(loop.started_by.name), lineage_key(loop.parent))


def _outcome(work: Running, reason: str, text: str) -> ToolOutput:
    head = f"task_id: {work.task_id} {RESUME_HINT}"
    if reason == "done":
        return ToolOutput(f"{head}\n\n<task_result>\n{text}\n</task_result>")
    if reason == "max_turns":
        return ToolOutput(f"{head}\nThe {work.agent} subagent reached its turn limit before "
                          f"finishing.\n\n<task_result>\n{text}\n</task_result>", is_error=True)
    if reason == "rejected":
        return ToolOutput(f"{head}\nThe user rejected a call of the {work.agent} subagent and "
                          "stopped it.", is_error=True)
    return ToolOutput(f"{head}\nThe {work.agent} subagent was cancelled.", is_error=True)

