"""``dm_cc undo [--list] [--session ID] [STEP]`` -- put the project back as it was
before a step (an edit, a write, a command's changes) of a session (docs/undo.md).

Without ``--session``, the session is this project's most recent one that has
steps. Without STEP, the last step is undone; with it, STEP and every later step
(newest first). All or nothing: when a path changed since, nothing is restored,
each reason is printed on stderr and the exit status is 1. ``--list`` shows the
steps. Light: it loads neither litellm, mcp nor prompt_toolkit.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def _undo(args: argparse.Namespace) -> int:
    from dm_cc.compose import open_world
    from dm_cc.ui import result_lines, step_lines

    world = open_world()
    store = world.undo
    session = args.session
    if session is None:
        sessions = store.sessions(world.root)
        if not sessions:
            print(f"no session of {world.root} has a step to undo",
                  file=sys.stdout if args.list else sys.stderr)
            return 0 if args.list else 1
        session = sessions[0]
    for problem in store.problems(session):
        print(f"dm_cc: warning: {problem}", file=sys.stderr)
    if args.list:
        print(f"session {session}:")
        for line in step_lines(store.steps(session)):
            print(line)
        return 0
    result = store.undo(session, args.step)
    lines = result_lines(result)
    if result.refused:
        print(f"dm_cc: {lines[0]}", file=sys.stderr)
        for line in lines[1:]:
            print(line, file=sys.stderr)
        return 1
    print(f"session {session}:")
    for line in lines:
        print(line)
    return 0 if result.ok else 1


def _step(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a step number: {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"steps are numbered from 1, not {number}")
    return number


def register(commands: Any, rest: Sequence[str] = ()) -> None:
    undo = commands.add_parser(
        "undo", help="put the project back as it was before a step of a session",
        description="Restore the project to before the last step of a session (an edit, a "
                    "write, a command's changes), or to before STEP (undoing it and every "
                    "later step). All or nothing: when a file changed since, nothing is "
                    "restored and the reasons are printed (exit status 1).")
    undo.add_argument("--list", action="store_true", help="only list the session's steps")
    undo.add_argument("--session", metavar="ID",
                      help="the session (default: this project's most recent one with steps)")
    undo.add_argument("step", metavar="STEP", nargs="?", type=_step,
                      help="undo this step and every later one (default: the last step)")
    undo.set_defaults(handler=_undo)
