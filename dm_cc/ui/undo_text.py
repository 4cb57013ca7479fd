"""Undo steps and what undoing did, in words: for ``dm_cc undo`` and the REPL's
``/undo`` and ``/rewind`` (plain text; no prompt_toolkit, so the light commands may
use it)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dm_cc.config import counted

if TYPE_CHECKING:
    from dm_cc.session import Message, Step, UndoResult

SHOWN_PATHS = 20      # paths named per result; the rest are counted


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def step_line(step: Step) -> str:
    """``  3  2025-01-02 10:00:00  edit src/a.py  (1 path)``."""
    return f"  {step.number:>3}  {_when(step.time)}  {step.label}  ({counted(len(step.paths), 'path')})"


def step_lines(steps: Sequence[Step]) -> list[str]:
    """The steps of a session, oldest first, and how to undo them."""
    if not steps:
        return ["no steps to undo"]
    return [*map(step_line, steps),
            "undo restores the project to before a step, undoing it and every later step"]


def result_lines(result: UndoResult) -> list[str]:
    """What an undo did: the steps undone and the paths restored; or why nothing was."""
    if result.refused:
        return ["nothing was undone:", *(f"  {reason}" for reason in result.refused)]
    lines = [f"undid step {step.number}: {step.label}" for step in result.undone]
    restored = list(result.restored)
    lines += [f"  restored {path}" for path in restored[:SHOWN_PATHS]]
    if len(restored) > SHOWN_PATHS:
        lines.append(f"  … and {counted(len(restored) - SHOWN_PATHS, 'more path')}")
    lines += [f"  left {path}/ in place: it holds files no step made" for path in result.left]
    if result.failed:
        lines.append(f"stopped: {result.failed}")
    return lines


def rewind_lines(typed: Sequence[tuple[int, Message]], steps: Sequence[Step]) -> list[str]:
    """The person's messages (index in the session, message), numbered for
    ``/rewind N``, each with how many file steps came since."""
    from dm_cc.ui.headless import one_line  # the REPL's: `dm_cc undo` does without it

    if not typed:
        return ["nothing to rewind to: no message yet"]
    lines = ["your messages (/rewind N: back to before message N, the conversation and the "
             "files changed since):"]
    for number, (index, message) in enumerate(typed, start=1):
        since = sum(1 for step in steps if step.turn >= index)
        lines.append(f"  {number:>3}  {one_line(message.content, 60)}"
                     + (f"  ({counted(since, 'file step')} since)" if since else ""))
    return lines
