"""A rule-based ChatModel with no LLM, for trying permission policies by hand.

It reads the last message that is not synthetic and answers with one tool call:

    run <command>          -> bash {command, description}
    read <path>            -> read {path}
    write <path> <text>    -> write {path, content}
    list [path]            -> list {path}
    plan                   -> plan_enter {}
    build                  -> plan_exit {}

After a tool result it reports the result as text (``error: …`` for an error),
which ends the turn. Anything else gets the list of forms above.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from dm_cc.llm.base import ModelReply, OnStream, TextDelta, ToolSpec
from dm_cc.session import Message, ToolCall, new_id

HELP = """\
offline model (no LLM): type one of
  run <command>          run a shell command (bash)
  read <path>            read a file
  write <path> <text>    write <text> to a file
  list [path]            list a directory (default .)
  plan                   switch to the plan agent (plan_enter)
  build                  leave plan mode (plan_exit)"""

# A path is one word, or quoted when it holds spaces; what follows it is the rest.
_PATH_AND_REST = re.compile(r"""("(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<word>\S+))\s?(?P<rest>.*)""",
                            re.DOTALL)


def parse_command(text: str) -> tuple[str, dict[str, Any]] | None:
    """The tool call a user line asks for, as (tool name, arguments); None if none."""
    verb, _, rest = text.strip().partition(" ")
    verb, rest = verb.lower(), rest.strip()
    if verb == "run" and rest:
        return "bash", {"command": rest, "description": f"Run: {_first_line(rest)}"}
    if verb in ("read", "write") and rest:
        match = _PATH_AND_REST.fullmatch(rest)
        if match is None:
            return None
        path = next(g for g in (match["dq"], match["sq"], match["word"]) if g is not None)
        if verb == "read":
            return "read", {"path": path}
        return "write", {"path": path, "content": match["rest"]}
    if verb == "list":
        return "list", {"path": rest or "."}
    if verb == "plan" and not rest:
        return "plan_enter", {}
    if verb == "build" and not rest:
        return "plan_exit", {}
    return None


def _first_line(command: str, width: int = 60) -> str:
    line = command.splitlines()[0]
    return line if len(line) <= width else line[:width - 1] + "…"


class OfflineModel:
    name = "offline"
    context_window: int | None = None     # no limit to speak of: never compacts on its own

    async def complete(self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec],
                       *, temperature: float | None = None,
                       on_stream: OnStream | None = None) -> ModelReply:
        result = self._answer(messages)
        if on_stream is not None and result.text:
            on_stream(TextDelta(result.text))
        return result

    def _answer(self, messages: Sequence[Message]) -> ModelReply:
        real = [m for m in messages if not m.synthetic]
        if real and real[-1].role == "tool":
            return ModelReply(text=_report(real))
        last_user = next((m for m in reversed(real) if m.role == "user"), None)
        command = parse_command(last_user.content) if last_user is not None else None
        if command is None:
            return ModelReply(text=HELP)
        name, arguments = command
        call = ToolCall(new_id("call"), name, arguments, raw_arguments=json.dumps(arguments))
        return ModelReply(tool_calls=(call,))


def _report(messages: list[Message]) -> str:
    """The trailing tool results, verbatim (``error: `` before an error)."""
    results: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.insert(0, message)
    return "\n\n".join(("error: " if m.is_error else "") + (m.content or "(no output)")
                       for m in results)
