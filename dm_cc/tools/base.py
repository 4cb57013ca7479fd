"""The Tool seam. A tool has typed params (pydantic → JSON schema), describes the
permission requests a call makes, and runs. It never checks a permission: the
loop is the one place a decision is enforced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from dm_cc.permissions import Request
from dm_cc.permissions.paths import PathContextDirs


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


@dataclass
class ToolContext:
    """What a running tool may know about where it runs."""

    root: Path
    cwd: Path
    home: Path
    session_id: str
    agent: str
    plan_file: Path | None = None
    todos: list[dict[str, Any]] = field(default_factory=list)
    # Whether the policy allows reading this absolute path outright. Tools that
    # show many files' contents or names under one request (grep, glob) leave out
    # what a read rule would not allow; the loop supplies it from the gate.
    may_read: Callable[[str], bool] = lambda path: True

    @property
    def dirs(self) -> PathContextDirs:
        return PathContextDirs(root=self.root, cwd=self.cwd, home=self.home)


class Tool(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type[BaseModel]]

    def requests(self, params: BaseModel, ctx: ToolContext) -> list[Request]: ...

    async def run(self, params: BaseModel, ctx: ToolContext) -> ToolOutput: ...
