"""A session's history as plain lines, for a person coming back to it: what a
front end prints when a session is continued or resumed.

    session_notice(session, root, continue_last=…, resume=…)
        "continuing session ses_… (fix the flaky test)", "no earlier session in
        /repo; starting a new one", or None for a new session nobody asked to continue
    replay(messages, last=3)
        > fix the flaky test                     a prompt (continuation lines indented)
          • bash pytest -q → 1 failed, 3 passed  a tool call and its result's first line
          ! bash rm -rf build → Permission denied: bash was not run.
          → agent plan [synthetic] Switched to …  an agent switch (by a tool, or by the
                                                  user: then without [synthetic])
          [synthetic] …                           any other message dm_cc wrote itself
        The test fails because …                 the assistant's text

Exchanges are counted by prompts (a synthetic message does not start one); with
``last`` only the last ones are shown, after a line saying how many were left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dm_cc.config import counted
from dm_cc.session import Message
from dm_cc.ui.headless import call_text, one_line

if TYPE_CHECKING:
    from dm_cc.session import Session

REPLAY_EXCHANGES = 3  # exchanges a continued session shows
PROMPT_LINES = 4      # lines of a prompt shown
ANSWER_LINES = 8      # lines of an assistant's text shown


def session_notice(session: Session, root: Path, *, continue_last: bool = False,
                   resume: str | None = None) -> str | None:
    """What to say about the session a front end opened: the session continued,
    or that ``--continue`` found none for this project (a new one was started)."""
    if resume or (continue_last and session.messages):
        return f"continuing session {session.info.id} ({session.info.title or 'untitled'})"
    if continue_last:
        return f"no earlier session in {root}; starting a new one ({session.info.id})"
    return None


def replay(messages: Sequence[Message], last: int | None = REPLAY_EXCHANGES) -> list[str]:
    """The last ``last`` exchanges of ``messages`` (all when None) as plain lines."""
    starts = [i for i, m in enumerate(messages) if m.role == "user" and not m.synthetic]
    skipped = len(starts) - last if last is not None and len(starts) > last else 0
    begin = starts[skipped] if skipped else 0
    lines = [f"… {counted(skipped, 'earlier exchange')}"] if skipped else []
    agent = next((m.agent for m in reversed(messages[:begin]) if m.role == "user"), None)
    for index, message in enumerate(messages[begin:], begin):
        if message.role == "user":
            lines += _user(message, switched=agent is not None and message.agent != agent)
            agent = message.agent
        elif message.role == "assistant":
            lines += _shown(message.content, ANSWER_LINES, "", "")
            results = _results(messages, index)
            lines += [_call_line(call.name, call_text(call), results.get(call.id))
                      for call in message.tool_calls]
    return lines


def _results(messages: Sequence[Message], index: int) -> dict[str, Message]:
    """The results of the calls of the reply at ``index``: the tool messages right
    after it, by call id (a session saved before calls had ids of dm_cc's own may
    hold the same id twice: a model's ``call_1`` after ``/model``)."""
    results: dict[str, Message] = {}
    for message in messages[index + 1:]:
        if message.role != "tool":
            break
        results.setdefault(message.tool_call_id or "", message)
    return results


def _user(message: Message, *, switched: bool) -> list[str]:
    if not message.synthetic:  # a switch the user asked for (/plan, --agent) leads the prompt
        lead = [f"  → agent {message.agent}"] if switched else []
        return lead + _shown(message.content, PROMPT_LINES, "> ", "  ")
    head = f"  → agent {message.agent} [synthetic]" if switched else "  [synthetic]"
    first = one_line(message.content.strip().splitlines()[0]) if message.content.strip() else ""
    return [f"{head} {first}".rstrip()]


def _shown(text: str, limit: int, first: str, rest: str) -> list[str]:
    lines = text.strip("\n").splitlines()
    shown = [(first if n == 0 else rest) + line for n, line in enumerate(lines[:limit])]
    if len(lines) > limit:
        shown.append(f"{rest}… {counted(len(lines) - limit, 'more line')}")
    return shown


def _call_line(name: str, shown: str, result: Message | None) -> str:
    call = f"{name} {shown}" if shown else name
    if result is None:
        return f"  ! {call} → (no result: interrupted)"
    first = next((line for line in result.content.splitlines() if line.strip()), "(no output)")
    return f"  {'!' if result.is_error else '•'} {call} → {one_line(first)}"
