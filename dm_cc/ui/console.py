"""The interactive session in its plainest form: a line prompt and approval
questions on the terminal. (The prompt_toolkit REPL replaces this front end; the
loop, approvals and sessions underneath stay the same.)
"""

from __future__ import annotations

import asyncio
import sys

from dm_cc.core.approval import Approval, ApprovalRequest
from dm_cc.core.events import AgentSwitched, Compacted, Event, ToolDecided, ToolFinished
from dm_cc.core.loop import Loop
from dm_cc.llm.base import ModelError, StreamEvent, TextDelta

HELP = "Type a request. /plan and /build switch agent, /exit quits. Ctrl-C stops a turn."


def _print(text: str = "", end: str = "\n") -> None:
    print(text, end=end, flush=True)


class ConsoleApprover:
    """Asks on the terminal: y = once, a = always, n = reject, anything else is
    feedback for the model."""

    async def approve(self, request: ApprovalRequest) -> Approval:
        _print(f"\n? {request.tool} needs approval:")
        for verdict in request.decision.verdicts:
            if verdict.action == "ask":
                note = f" ({verdict.note})" if verdict.note else ""
                _print(f"    {verdict.request.permission} {verdict.request.pattern}  "
                       f"[{verdict.rule.source}]{note}")
        if request.preview:
            _print(request.preview)
        always = ", ".join(f"{r.permission} {r.pattern!r}" for r in request.always_rules())
        _print(f"  y = yes once, a = always ({always or 'nothing to remember'}), n = no, "
               "or type what to do instead")
        answer = (await asyncio.to_thread(input, "  > ")).strip()
        if answer.lower() in ("y", "yes"):
            return Approval("once")
        if answer.lower() in ("a", "always"):
            return Approval("always")
        if answer.lower() in ("n", "no", ""):
            return Approval("reject")
        return Approval("reject", answer)


def on_event(event: Event) -> None:
    if isinstance(event, ToolDecided) and event.decision.action == "deny":
        _print(f"\n  x {event.call.name} denied")
    elif isinstance(event, ToolFinished):
        shown = event.output.display or event.output.output
        lines = shown.splitlines()
        head = "\n".join(f"    {line}" for line in lines[:12])
        more = f"\n    … {len(lines) - 12} more lines" if len(lines) > 12 else ""
        _print(f"\n  {'!' if event.output.is_error else '•'} {event.call.name}\n{head}{more}")
    elif isinstance(event, AgentSwitched):
        _print(f"\n  → agent: {event.agent}")
    elif isinstance(event, Compacted):
        _print(f"\n  ⇢ compacted {event.summarised} messages: about {event.before_tokens} → "
               f"{event.after_tokens} tokens")


def on_stream(event: StreamEvent) -> None:
    if isinstance(event, TextDelta):
        _print(event.text, end="")


def run_console(loop: Loop) -> int:
    """Read prompts until /exit or end of input; each runs one turn of ``loop`` (made
    with :class:`ConsoleApprover`, :func:`on_event` and :func:`on_stream`)."""
    _print(f"dm_cc — session {loop.session.info.id}, agent {loop.next_agent or loop.agent.name}, "
           f"model {loop.rt.model.name}\n{HELP}")
    while True:
        try:
            line = input(f"\n{loop.next_agent or loop.agent.name}> ").strip()
        except (EOFError, KeyboardInterrupt):
            _print()
            return 0
        if line in ("/exit", "/quit"):
            usage = loop.usage
            _print(f"tokens: {usage.prompt_tokens} in, {usage.completion_tokens} out; "
                   f"cost ${usage.cost:.4f}")
            return 0
        if line in ("/plan", "/build"):
            loop.next_agent = line[1:]
            continue
        if not line:
            continue
        try:
            result = asyncio.run(loop.run(line))
        except KeyboardInterrupt:
            _print("\n  (turn cancelled)")
            continue
        except ModelError as exc:
            print(f"dm_cc: model error: {exc}", file=sys.stderr)
            continue
        if result.reason == "rejected":
            _print("\n  (stopped: rejected)")
        elif result.reason != "done":
            _print(f"\n  ({result.reason}) {result.text}")
        else:
            _print()
