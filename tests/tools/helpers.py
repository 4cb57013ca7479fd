"""Calling a tool the way the loop does: validate the arguments, then run or derive."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from dm_cc.tools.base import Tool, ToolContext, ToolOutput


def call(tool: Tool[Any], ctx: ToolContext, **args: Any) -> ToolOutput:
    return asyncio.run(tool.run(tool.Params.model_validate(args), ctx))


def derive(tool: Tool[Any], ctx: ToolContext, **args: Any) -> list[tuple[str, str]]:
    """(permission, pattern) of each request the call makes."""
    return [(r.permission, r.pattern) for r in tool.requests(tool.Params.model_validate(args), ctx)]


def with_cwd(ctx: ToolContext, cwd: Path) -> ToolContext:
    """``ctx`` with another working directory."""
    return dataclasses.replace(ctx, where=ctx.where._replace(cwd=cwd))
