"""An MCP server's tool as a dm_cc Tool: ``mcp__<server>__<tool>``.

It is gated like every tool (the loop enforces; this only describes): its
permission is its full name, and its one request is the call's arguments, kind
``json`` in the catalog, matched structurally by ``key=value`` patterns
(``dm_cc.permissions.patterns``). The server's input schema goes to the model as
it is; the arguments are checked only to be a JSON object (:class:`JsonArguments`)
and the server judges the rest. What comes back is text for the model, cut at
MAX_OUTPUT_CHARS like the bash tool's output.

A tool reaches its server through the one callable it is given (:data:`Call`,
``McpServers.call`` in a session): the servers build their tools, never the
other way round.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dm_cc.mcp.connection import CallRefused, CallTimedOut, ServerFailed
from dm_cc.permissions import Request
from dm_cc.tools import JsonArguments, ToolContext, ToolEntry, ToolOutput, mcp_effects

if TYPE_CHECKING:
    import mcp_types as types

MAX_OUTPUT_CHARS = 30_000
NO_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

Call = Callable[[str, str, dict[str, Any]], Awaitable["types.CallToolResult"]]
"""Calls a server's tool: (server, the server's tool name, arguments) -> its result;
ServerFailed, CallTimedOut or CallRefused when the call cannot be made."""


class McpTool:
    """Tool ``original`` of ``server``, named ``name`` (sanitised) in dm_cc, called
    through ``call``."""

    Params = JsonArguments

    def __init__(self, call: Call, server: str, name: str, tool: types.Tool) -> None:
        self._call = call
        self.server = server
        self.name = name
        self.original = tool.name
        hints = tool.annotations
        self.read_only = bool(hints and hints.read_only_hint)
        self.description = (tool.description or tool.title or tool.name).strip()
        self.input_schema: dict[str, Any] = dict(tool.input_schema or NO_SCHEMA)
        # what it does, as its server says (unknown: everything): read-only agents' rights
        self.entry = ToolEntry(name, name, "json", None, effects=mcp_effects(
            self.read_only, hints.open_world_hint if hints is not None else None))

    def describe(self, ctx: ToolContext) -> str:
        return self.description

    def requests(self, params: JsonArguments, ctx: ToolContext) -> list[Request]:
        return self.entry.requests(params.root, ctx.where)

    def preview(self, params: JsonArguments, ctx: ToolContext) -> str | None:
        return None

    async def run(self, params: JsonArguments, ctx: ToolContext) -> ToolOutput:
        try:
            result = await self._call(self.server, self.original, params.root)
        except (ServerFailed, CallTimedOut, CallRefused) as exc:
            return ToolOutput(f"{self.name} failed: MCP server {self.server}: {exc}",
                              is_error=True)
        return ToolOutput(capped(result_text(result)), is_error=bool(result.is_error))


def result_text(result: types.CallToolResult) -> str:
    """What a call returned, as text for the model: each content block in order
    (text as it is; images, audio and links named), else the structured content."""
    parts = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)  # type: ignore[union-attr]
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {getattr(block, 'mime_type', '?')}, "
                         f"{len(getattr(block, 'data', '') or '')} base64 characters]")
        elif kind == "resource":
            resource = block.resource  # type: ignore[union-attr]
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource: {resource.uri}]")
        elif kind == "resource_link":
            parts.append(f"[resource: {getattr(block, 'uri', '?')}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    return "\n".join(parts) if parts else "(no output)"


def capped(text: str) -> str:
    """``text`` cut at MAX_OUTPUT_CHARS, saying so."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return (text[:MAX_OUTPUT_CHARS]
            + f"\n\n(cut at {MAX_OUTPUT_CHARS:,} of {len(text):,} characters)")
