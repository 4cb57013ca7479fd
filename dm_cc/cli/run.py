"""``dm_cc run PROMPT`` — one headless turn: prints the final answer (or JSON events).

An ask never waits for input that cannot come: ``--on-ask deny`` (default) tells
the model it was not allowed; ``--on-ask fail`` stops the run with exit status 3.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from dm_cc.cli.options import add_session_options, options_from

EXIT_ASK_FAILED = 3


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from dm_cc.compose import open_world
    from dm_cc.core.approval import AskFailed, HeadlessApprover
    from dm_cc.core.events import Event
    from dm_cc.llm.base import ModelError
    from dm_cc.ui.headless import event_json

    def emit(event: Event) -> None:
        if args.json:
            print(json.dumps(event_json(event)), flush=True)

    world = open_world(options_from(args))
    loop = world.open_loop(HeadlessApprover(args.on_ask), on_event=emit)
    try:
        result = asyncio.run(loop.run(args.prompt))
    except AskFailed as exc:
        if args.json:
            print(json.dumps({"type": "ask_failed", "message": str(exc),
                              "session_id": loop.session.info.id}), flush=True)
        print(f"dm_cc: {exc}", file=sys.stderr)
        return EXIT_ASK_FAILED
    except ModelError as exc:
        print(f"dm_cc: model error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        usage = loop.usage
        print(json.dumps({"type": "result", "session_id": loop.session.info.id,
                          "reason": result.reason, "text": result.text,
                          "usage": {"prompt_tokens": usage.prompt_tokens,
                                    "completion_tokens": usage.completion_tokens,
                                    "cost": usage.cost}}), flush=True)
    else:
        print(result.text)
    return 0 if result.reason == "done" else 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser],
             rest: Sequence[str] = ()) -> None:
    run = commands.add_parser("run", help="one headless turn: print the final answer",
                              description=(__doc__ or "").splitlines()[0])
    add_session_options(run)
    run.add_argument("--on-ask", choices=("deny", "fail"), default="deny",
                     help="what an ask becomes: deny (the model is told) or fail (exit 3)")
    run.add_argument("--json", action="store_true", help="print JSON events, one per line")
    run.add_argument("--max-turns", type=int, help="stop after this many model calls")
    run.add_argument("prompt", metavar="PROMPT")
    run.set_defaults(handler=_run)

