"""The Tool seam. A tool has typed params (pydantic → JSON schema), describes the
permission requests a call makes, and runs. It never checks a permission: the
loop is the one place a decision is enforced.

Every tool has an ``entry`` (:class:`~dm_cc.tools.catalog.ToolEntry`: permission,
main argument, request kind). Built-in tools subclass :class:`CatalogTool`, whose
entry is the tool catalog's and whose requests are derived from it, so a tool file
holds only its params and what it does; a tool made elsewhere (the MCP bridge, a
test) brings an entry of its own.

What the model is shown of a tool's arguments is its ``input_schema``: a built-in
tool's is its pydantic ``Params``' JSON schema; a tool whose schema comes from
elsewhere (an MCP server's, sent to the model as it is) gives that one, and takes
:class:`JsonArguments` as its ``Params``: the arguments checked only to be a JSON
object, the server judges the rest.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, RootModel

from dm_cc.permissions import PathContextDirs, Request
from dm_cc.sandbox import Plan
from dm_cc.tools.catalog import ToolEntry, entries, entry

ParamsT = TypeVar("ParamsT", bound=BaseModel)


class JsonArguments(RootModel[dict[str, Any]]):
    """A call's arguments as one JSON object, for a tool whose schema is not pydantic's."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """``output`` goes to the model; ``display`` (optional) to the user.

    ``switch_agent`` asks the loop to hand the session to another agent (plan_enter,
    plan_exit) by appending a synthetic user message with ``switch_message``.
    """

    output: str
    display: str | None = None
    is_error: bool = False
    switch_agent: str | None = None
    switch_message: str | None = None
    # The sandbox stopped the call: the requests to run it again unconfined (one
    # sandbox_escape per simple command), which the loop settles; () when not stopped.
    escape: tuple[Request, ...] = ()
    # The command ran as a transaction (its plan): what it changed has not landed
    # yet; the loop judges the changes, applies those allowed and says the rest.
    landing: Plan | None = None


class UndoRecorder(Protocol):
    """One undo step being recorded (:mod:`dm_cc.session.undo`): told each path before
    it changes (``moving``: it will be replaced or removed, never written into;
    ``at``: its parent directory's descriptor, the caller's), closed after; ``landed``:
    a path's state after is looked at now, through ``at`` (``known``: the inode and
    sha256 of the file just put there). ``keep`` raises a DmccError (UndoError) when
    it cannot keep a path."""

    def keep(self, relative: str, *, moving: bool = False, at: int | None = None) -> None: ...

    def landed(self, relative: str, at: int, *,
               known: tuple[int, str] | None = None) -> None: ...

    def close(self) -> object: ...


class Subagents(Protocol):
    """What the task tool needs of the loop: the subagents there are and those this
    agent may start (name → description), and starting (or resuming) one."""

    def known(self) -> Mapping[str, str]: ...

    def choices(self) -> Mapping[str, str]: ...

    async def start(self, params: Any, call_id: str) -> ToolOutput: ...


@dataclass
class ToolContext:
    """What a running tool may know about where it runs."""

    where: PathContextDirs        # project root, working and home directories
    session_id: str
    agent: str
    plan_file: Path | None = None
    todos: list[dict[str, Any]] = field(default_factory=list)
    # Whether the policy allows reading this absolute path outright. Tools that
    # show many files' contents or names under one request (grep, glob) leave out
    # what a read rule would not allow; the loop supplies it from the gate.
    may_read: Callable[[str], bool] = lambda path: True
    # The subagents this agent may start, and how (the task tool); None: none.
    subagents: Subagents | None = None
    call_id: str = ""             # the call being run (set by the loop for each call)
    # How to run a command under this agent's policy (the sandbox, DESIGN.md §8), as
    # a transaction where they work; None: unconfined (no sandbox in this runtime,
    # or an approved escape).
    confine: Callable[[Sequence[str]], Plan] | None = None
    # A new undo step, given its label ("edit src/a.py"): the edit and write tools keep
    # what they change in it (docs/undo.md); None: nothing is kept. ``undo_limit``:
    # the most bytes one step may keep (None: no undo).
    undo: Callable[[str], UndoRecorder] | None = None
    undo_limit: int | None = None
    # Where a running tool shows what it prints, as it prints it (the REPL keeps a
    # command's last lines under the spinner); None: nowhere. Set for each call.
    on_output: Callable[[str], None] | None = None
    # Given what a tool had when the turn was cancelled under it (a command's output
    # so far, saying it was cut): the loop records it as the call's result, for the
    # model too, instead of "Cancelled". Set for each call.
    on_cancel: Callable[[ToolOutput], None] | None = None

    @property
    def root(self) -> Path:
        return self.where.root

    @property
    def cwd(self) -> Path:
        return self.where.cwd

    @property
    def home(self) -> Path:
        return self.where.home


class Tool(Protocol[ParamsT]):
    """What the loop needs of a tool: a name, a description and a params model for
    the model, the requests a call makes, and running it."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def describe(self, ctx: ToolContext) -> str:
        """The description as the model is shown it where ``ctx`` runs (usually
        ``description``; the task tool lists the subagents this agent may start)."""
        ...

    @property
    def Params(self) -> type[ParamsT]: ...  # noqa: N802 - the model class, by convention

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of its arguments, as the model is shown it."""
        ...

    @property
    def entry(self) -> ToolEntry:
        """Its permission, main argument and request kind."""
        ...

    def requests(self, params: ParamsT, ctx: ToolContext) -> list[Request]: ...

    def preview(self, params: ParamsT, ctx: ToolContext) -> str | None:
        """What the call would do, shown in the approval prompt (None: nothing)."""
        ...

    async def run(self, params: ParamsT, ctx: ToolContext) -> ToolOutput: ...


class CatalogTool(Generic[ParamsT]):
    """A built-in tool: its entry is the catalog's, its requests derived from it."""

    name: ClassVar[str]
    description: ClassVar[str]
    Params: type[ParamsT]

    @property
    def entry(self) -> ToolEntry:
        return entry(self.name)

    @property
    def input_schema(self) -> dict[str, Any]:
        return _schema(self.Params)

    def describe(self, ctx: ToolContext) -> str:
        return self.description

    def requests(self, params: ParamsT, ctx: ToolContext) -> list[Request]:
        return self.entry.requests(params.model_dump(exclude_none=True), ctx.where)

    def preview(self, params: ParamsT, ctx: ToolContext) -> str | None:
        return None


@functools.cache
def _schema(params: type[BaseModel]) -> dict[str, Any]:
    """A params model's JSON schema, made once (a few milliseconds each)."""
    return params.model_json_schema()


def load_tool(found: ToolEntry) -> type[Tool[Any]]:
    """The class implementing a catalog entry (imported now: the policy commands
    never load the tools' pydantic models). LookupError when it has none."""
    if found.cls is None:
        raise LookupError(f"{found.name} is judged by policy but has no implementation yet")
    module, _, name = found.cls.partition(":")
    loaded: type[Tool[Any]] = getattr(importlib.import_module(module), name)
    return loaded


def builtin_tools() -> list[Tool[Any]]:
    """One instance of every implemented built-in tool, in catalog order."""
    return [load_tool(e)() for e in entries() if e.cls is not None]
