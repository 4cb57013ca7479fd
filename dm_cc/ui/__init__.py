"""What a person sees: the interactive console, approval prompts, and the headless
renderer of the core's events.

    repl.py          the REPL (prompt_toolkit), with prompt.py, screen.py, slash.py,
                     render.py and approval_prompt.py (changes_text.py: its
                     question about a command's changes; command_text.py: a
                     command, its here-documents as data); pager.py shows what
                     the screen cut, whole; thinking.py the model's thinking
    early.py         the first prompt, drawn before prompt_toolkit is imported
    headless.py      events as lines and JSON (``dm_cc run``); transcript.py a
                     session's history as lines
    describe.py, sandbox_text.py, mcp_text.py, trust_text.py, undo_text.py,
    sessions_text.py decisions, the sandbox, MCP servers, a project's own files,
                     undo steps and saved sessions in words: plain text, for the
                     light commands too; usage_text.py tokens, cache and cost
    permissions_text.py  what /permissions shows: the layers folded to a screen

The front door is lazy: a name's module is imported on its first use, so the
light commands never load prompt_toolkit.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.ui.describe import auto_mode_text, hooks_lines, layer_lines, trace_lines, tree_indent
    from dm_cc.ui.early import early_prompt
    from dm_cc.ui.headless import (
        CallLines,
        event_json,
        failure_json,
        result_json,
        retry_line,
        session_json,
    )
    from dm_cc.ui.mcp_text import approved_lines, server_lines, server_rows, unapproved_line
    from dm_cc.ui.repl import run_repl
    from dm_cc.ui.sandbox_text import status_lines, where_line
    from dm_cc.ui.sessions_text import session_table
    from dm_cc.ui.transcript import replay, session_notice
    from dm_cc.ui.trust_text import trust_lines, trusted_lines
    from dm_cc.ui.undo_text import result_lines, step_lines

__all__ = [
    "CallLines",
    "approved_lines",
    "auto_mode_text",
    "early_prompt",
    "event_json",
    "failure_json",
    "hooks_lines",
    "layer_lines",
    "replay",
    "result_json",
    "result_lines",
    "retry_line",
    "run_repl",
    "server_lines",
    "server_rows",
    "session_json",
    "session_notice",
    "session_table",
    "status_lines",
    "step_lines",
    "trace_lines",
    "tree_indent",
    "trust_lines",
    "trusted_lines",
    "unapproved_line",
    "where_line",
]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.ui.describe": ("auto_mode_text", "hooks_lines", "layer_lines", "trace_lines",
                          "tree_indent"),
    "dm_cc.ui.early": ("early_prompt",),
    "dm_cc.ui.headless": ("CallLines", "event_json", "failure_json", "result_json", "retry_line",
                          "session_json"),
    "dm_cc.ui.mcp_text": ("approved_lines", "server_lines", "server_rows", "unapproved_line"),
    "dm_cc.ui.repl": ("run_repl",),
    "dm_cc.ui.sandbox_text": ("status_lines", "where_line"),
    "dm_cc.ui.sessions_text": ("session_table",),
    "dm_cc.ui.transcript": ("replay", "session_notice"),
    "dm_cc.ui.trust_text": ("trust_lines", "trusted_lines"),
    "dm_cc.ui.undo_text": ("result_lines", "step_lines"),
}

if not TYPE_CHECKING:  # for mypy, the imports above are the names
    _OWNER = {name: module for module, names in _LAZY.items() for name in names}

    def __getattr__(name: str) -> object:
        """``name``, its module imported on first use."""
        module = _OWNER.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # found once: later lookups do not come here
        return value
