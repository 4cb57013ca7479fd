"""``dm_cc run PROMPT`` — one headless turn: the final answer on stdout, one line
per tool call on stderr (or, with ``--json``, every event as JSON Lines on stdout).

``PROMPT`` ``-`` reads the prompt from standard input (all of it: one message).
A model call that is retried (rate limited, overloaded) says so on stderr.
An ask never waits for input that cannot come: ``--on-ask deny`` (default) tells
the model it was not allowed; ``--on-ask fail`` stops the run with exit status 3.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dm_cc.cli.options import (
    add_session_options,
    options_from,
    start_debug_log,
    with_root_warnings,
)
from dm_cc.errors import UsageError

if TYPE_CHECKING:  # annotations only: `dm_cc --help` stays fast
    from collections.abc import Callable
    from pathlib import Path

    from dm_cc.compose import World
    from dm_cc.core import Event
    from dm_cc.session import Session

EXIT_ASK_FAILED = 3
ASKED = {"deny": "refused by --on-ask deny", "fail": "run stopped by --on-ask fail"}
JSON_HELP = ("print JSON Lines on stdout: a session record, every event (tool_decided, "
             "tool_finished, agent_switched, turn_ended), then result, ask_failed or "
             "model_error (docs/headless.md)")


def _say(line: str) -> None:
    """One line on stderr, written whole (an MCP server's notice may come from its
    thread)."""
    sys.stderr.write(f"dm_cc: {line}\n")
    sys.stderr.flush()


def _record(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def read_prompt(argument: str) -> str:
    """The prompt ``argument`` names (``-``: all of standard input); UsageError if empty."""
    prompt = sys.stdin.read() if argument == "-" else argument
    prompt = prompt.lstrip("\r\n").rstrip()
    if not prompt:
        where = "standard input held no prompt" if argument == "-" else "the prompt is empty"
        raise UsageError(f"run: {where}; give PROMPT, or - to read it from standard input")
    return prompt


def _run(args: argparse.Namespace) -> int:
    from dm_cc.compose import open_world
    from dm_cc.ui import CallLines, event_json

    prompt = read_prompt(args.prompt)
    start_debug_log(args)
    lines = CallLines(ASKED[args.on_ask])

    def emit(event: Event) -> None:
        if args.json:
            _record(event_json(event))
        else:
            for line in lines.lines(event):
                _say(line)

    world = with_root_warnings(open_world(options_from(args)))
    try:
        return _turn(args, world, prompt, emit)
    finally:
        world.close()  # the MCP servers it started, the sandbox's network proxy


def _turn(args: argparse.Namespace, world: World, prompt: str,
          emit: Callable[[Event], None]) -> int:
    import asyncio
    import threading

    from dm_cc.agents import mentioned
    from dm_cc.core import AskFailed, HeadlessApprover
    from dm_cc.llm import ModelError, RetryNotices
    from dm_cc.ui import failure_json, result_json, retry_line

    # notices while it opens (MCP servers) follow the session record; those of the MCP
    # servers come from their thread, whenever one fails: one event at a time, in order
    opening: list[Event] | None = []
    lock = threading.Lock()

    def on_event(event: Event) -> None:
        with lock:
            if opening is not None:
                opening.append(event)
            else:
                emit(event)

    named = mentioned(world.agents, prompt)   # `@explore find …` starts that subagent
    retries = RetryNotices(lambda retry: _say(retry_line(retry)))   # the reply: only at its end
    loop = world.open_loop(HeadlessApprover(args.on_ask), on_event=on_event, on_stream=retries)
    session = loop.session
    in_charge = world.agent(loop.next_agent or loop.agent.name)
    for warning in (world.sandbox.warning(), world.auto_notice(in_charge), world.trust_notice()):
        if warning is not None:
            _say(warning)
    _opening(args, session, world.root)
    with lock:
        for event in opening or ():
            emit(event)
        opening = None

    def stopped(kind: str, message: str) -> None:
        if args.json:
            _record(failure_json(kind, session.info.id, message))
        _say(message)

    try:
        result = asyncio.run(loop.run(prompt, task=named))
    except AskFailed as exc:
        stopped("ask_failed", str(exc))
        return EXIT_ASK_FAILED
    except ModelError as exc:
        stopped("model_error", f"model error: {exc}")
        return 1
    if args.json:
        _record(result_json(session.info.id, result.reason, result.text, loop.usage))
    else:
        print(result.text)
    return 0 if result.reason == "done" else 1


def _opening(args: argparse.Namespace, session: Session, root: Path) -> None:
    """Say which session the run continues and replay its end (stderr), or that
    there was none to continue; with --json, the ``session`` record."""
    from dm_cc.ui import replay, session_json, session_notice

    for warning in session.warnings:
        _say(f"warning: {warning}")
    notice = session_notice(session, root, continue_last=args.continue_last, resume=args.resume)
    if notice:
        _say(notice)
    if args.json:
        _record(session_json(session.info.id, session.info.title, len(session.messages)))
    elif notice:
        for line in replay(session.messages):
            print(f"  {line}", file=sys.stderr)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser],
             rest: Sequence[str] = ()) -> None:
    run = commands.add_parser("run", help="one headless turn: print the final answer",
                              description=(__doc__ or "").split("\n\n")[0].replace("``", ""))
    add_session_options(run, command=True)
    run.add_argument("--on-ask", choices=("deny", "fail"), default="deny",
                     help="what an ask becomes: deny (the model is told) or fail (exit 3)")
    run.add_argument("--json", action="store_true", help=JSON_HELP)
    run.add_argument("prompt", metavar="PROMPT", help="the request; - reads it from standard input")
    run.set_defaults(handler=_run)
