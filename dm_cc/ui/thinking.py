"""The model's thinking (its reasoning, for a model that gives it) as the REPL shows
it: dimmed and folded, whole on request.

While it streams, the status area shows its last line under the spinner
(:meth:`dm_cc.ui.screen.Screen.think`); once the reply goes on (its text, a tool
call, the turn's end) it folds to one dim line, ``✻ thought for 3.2 s · Ctrl-O
shows it``. Ctrl-O at the prompt, or ``/thinking``, shows the thinking of the last
turn that had some, whole, in the pager (:mod:`dm_cc.ui.pager`): each reply's in
order. It is read from the session, where every reply's reasoning is kept, so it
is there after ``--continue`` too. (Ctrl-O, as in Claude Code, where it expands
what is folded; Ctrl-R stays the history search.)
"""

from __future__ import annotations

from collections.abc import Sequence

from dm_cc.session import Message
from dm_cc.ui.pager import page
from dm_cc.ui.render import Line
from dm_cc.ui.screen import THINKING

NONE = "The model has shown no thinking in this session (not every model gives it)."


def last_thinking(messages: Sequence[Message]) -> list[str]:
    """The reasoning of each reply of the last turn that had any (a turn: from a message
    the person typed to the next), in order."""
    replies = [at for at, m in enumerate(messages) if m.role == "assistant" and _thought(m)]
    if not replies:
        return []
    start = max((at for at, m in enumerate(messages[:replies[-1]])
                 if m.role == "user" and not m.synthetic), default=-1)
    return [_thought(m) for m in messages[start + 1:replies[-1] + 1]
            if m.role == "assistant" and _thought(m)]


def _thought(message: Message) -> str:
    return (message.reasoning or "").strip()


def thinking_lines(thoughts: Sequence[str]) -> list[Line]:
    """The pager's text: each reply's thinking, headed when there are several."""
    if not thoughts:
        return [[("", NONE)]]
    lines: list[Line] = []
    for number, thought in enumerate(thoughts, 1):
        if len(thoughts) > 1:
            lines += [[]] if number > 1 else []
            lines.append([("class:dim", f"{THINKING}reply {number} of {len(thoughts)}")])
        lines += [[("", text)] for text in thought.splitlines()]
    return lines


async def show_thinking(messages: Sequence[Message]) -> None:
    """The last turn's thinking, whole, in the pager (q comes back)."""
    await page(thinking_lines(last_thinking(messages)), "the model's thinking (last turn)")
