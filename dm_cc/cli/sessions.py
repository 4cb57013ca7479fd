"""``dm_cc sessions list|show`` — the saved sessions from the shell.

Damaged lines in a session file are reported on stderr as ``dm_cc: warning:
file:line: …`` (and under ``"warnings"`` in ``show --json``); they never stop the
command; so is a damaged session index, which ``list`` rebuilds from the files (it
reads the index, not every session: dm_cc/session/session_index.py). None of this
imports litellm or mcp.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dm_cc.config import counted

if TYPE_CHECKING:  # the store is imported by the handlers only: `dm_cc policy` stays fast
    from dm_cc.session import Message

RESULT_LINES = 6      # lines of a tool result shown by `show`
LINE_CHARS = 200      # characters of one shown line (results, call arguments)


def _when(seconds: float, pattern: str = "%Y-%m-%d %H:%M") -> str:
    return time.strftime(pattern, time.localtime(seconds))


def _cut(text: str, limit: int = LINE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _list(args: argparse.Namespace) -> int:
    from dm_cc.compose import open_world
    from dm_cc.config import project_root
    from dm_cc.session import session_tree

    store = open_world().sessions
    project = project_root(Path(args.project)) if args.project else None
    infos = store.list(project)
    for warning in store.take_warnings():   # a damaged index, rebuilt
        print(f"dm_cc: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps([info.to_json() for info in infos], indent=2, ensure_ascii=False))
        return 0
    if not infos:
        print(f"no sessions in {store.root}")
        return 0
    import shutil

    from dm_cc.ui import session_table

    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    for line in session_table(session_tree(infos), width, where=True):
        print(line)
    return 0


def _show(args: argparse.Namespace) -> int:
    from dm_cc.compose import open_world

    session = open_world().sessions.load(args.id)
    for warning in session.warnings:
        print(f"dm_cc: warning: {warning}", file=sys.stderr)
    info = session.info
    if args.json:
        print(json.dumps({**info.to_json(), "messages": [m.to_json() for m in session.messages],
                          "warnings": session.warnings}, indent=2, ensure_ascii=False))
        return 0
    print(f"session {info.id}" + (f"  {json.dumps(info.title, ensure_ascii=False)}"
                                  if info.title else ""))
    print(f"  project {info.project}")
    print(f"  created {_when(info.created)}, agent in charge {info.agent}, "
          f"{counted(info.messages, 'message')}"
          + (f", child of {info.parent_id}" if info.parent_id else ""))
    for number, message in enumerate(session.messages, start=1):
        print()
        print("\n".join(_message_block(number, message)))
    return 0


def _message_block(number: int, message: Message) -> list[str]:
    head = f"[{number}] {message.role}"
    if message.role == "tool":
        head += f" {message.tool_name or '?'} ({message.tool_call_id or '?'})"
        head += " error" if message.is_error else ""
    head += f" · {message.agent}" + (" [synthetic]" if message.synthetic else "")
    head += f" · {_when(message.time, '%H:%M:%S')}"
    lines = [head]
    if message.reasoning:
        lines.append(f"    (reasoning, {counted(len(message.reasoning), 'character')})")
    content = message.content.splitlines()
    if message.role == "tool" and len(content) > RESULT_LINES:
        hidden = len(content) - RESULT_LINES
        content = content[:RESULT_LINES] + [f"… ({counted(hidden, 'more line')})"]
    for line in content:
        lines.append("    " + (_cut(line) if message.role == "tool" else line))
    for call in message.tool_calls:
        arguments = (json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
                     if call.arguments is not None else f"(malformed) {call.raw_arguments}")
        lines.append(f"    → {call.name} ({call.id}) {_cut(arguments)}")
    return lines


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser],
             rest: Sequence[str] = ()) -> None:
    sessions = commands.add_parser("sessions", help="list and show saved sessions",
                                   description="Saved sessions (append-only JSONL files).")
    sub = sessions.add_subparsers(dest="sessions_command", metavar="SUBCOMMAND", required=True)
    listing = sub.add_parser("list", help="every saved session, oldest first",
                             description="Every saved session that holds a message, oldest "
                             "first (newest last); a subagent's session indented under the one "
                             "that started it.")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument("--project", metavar="DIR",
                         help="only the sessions of the project containing DIR")
    listing.set_defaults(handler=_list)
    show = sub.add_parser("show", help="the messages of one session",
                          description="The messages of one session; tool results summarised.")
    show.add_argument("--json", action="store_true", help="machine-readable output (complete)")
    show.add_argument("id", metavar="ID", help="session id (see `dm_cc sessions list`)")
    show.set_defaults(handler=_show)
