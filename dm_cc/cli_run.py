"""``dm_cc run PROMPT`` — one headless turn: prints the final answer (or JSON events).

An ask never waits for input that cannot come: ``--on-ask deny`` (default) tells
the model it was not allowed; ``--on-ask fail`` stops the run with exit status 3.
"""

from __future__ import annotations

import argparse
import json
import sys

EXIT_ASK_FAILED = 3


def add_session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", help="primary agent: build (default), plan, or a custom one")
    parser.add_argument("--model", help="litellm model string, or 'offline' (env DM_CC_MODEL)")
    parser.add_argument("--api-base", help="OpenAI-compatible server URL (env DM_CC_API_BASE)")
    parser.add_argument("--policy", action="append", default=[], metavar="FILE",
                        help="extra policy file, after the user policy (repeatable)")
    parser.add_argument("--continue", dest="continue_last", action="store_true",
                        help="continue the latest session of this project")
    parser.add_argument("--resume", metavar="ID", help="resume the session with this id")


def options_from(args: argparse.Namespace):
    from dm_cc.app import Options

    return Options(agent=args.agent, model=args.model, api_base=args.api_base,
                   policies=tuple(args.policy), continue_last=args.continue_last,
                   resume=args.resume, max_turns=getattr(args, "max_turns", None))


def _event_json(event) -> dict:
    from dm_cc.events import AgentSwitched, ToolDecided, ToolFinished, TurnEnded

    if isinstance(event, ToolDecided):
        return {"type": "tool_decided", "tool": event.call.name, "call_id": event.call.id,
                "arguments": event.call.arguments, "decision": event.decision.action,
                "requests": [{"permission": v.request.permission, "pattern": v.request.pattern,
                              "decision": v.action, "source": v.rule.source,
                              "reason": v.rule.reason} for v in event.decision.verdicts]}
    if isinstance(event, ToolFinished):
        return {"type": "tool_finished", "tool": event.call.name, "call_id": event.call.id,
                "is_error": event.output.is_error, "output": event.output.output}
    if isinstance(event, AgentSwitched):
        return {"type": "agent_switched", "agent": event.agent}
    if isinstance(event, TurnEnded):
        return {"type": "turn_ended", "reason": event.reason, "text": event.text}
    return {"type": type(event).__name__}


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from dm_cc.app import open_loop
    from dm_cc.approval import AskFailed, HeadlessApprover
    from dm_cc.llm.base import ModelError

    def emit(event) -> None:
        if args.json:
            print(json.dumps(_event_json(event)), flush=True)

    loop = open_loop(options_from(args), HeadlessApprover(args.on_ask), on_event=emit)
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


def register(commands: argparse._SubParsersAction) -> None:
    run = commands.add_parser("run", help="one headless turn: print the final answer",
                              description=__doc__.splitlines()[0])
    add_session_options(run)
    run.add_argument("--on-ask", choices=("deny", "fail"), default="deny",
                     help="what an ask becomes: deny (the model is told) or fail (exit 3)")
    run.add_argument("--json", action="store_true", help="print JSON events, one per line")
    run.add_argument("--max-turns", type=int, help="stop after this many model calls")
    run.add_argument("prompt", metavar="PROMPT")
    run.set_defaults(handler=_run)

