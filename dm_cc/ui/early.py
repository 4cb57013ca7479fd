"""The first prompt, drawn before prompt_toolkit is even imported.

Importing asyncio and prompt_toolkit takes longer than all of ``dm_cc --version``,
so the interactive session writes its prompt (the same ``dm_cc> `` the REPL draws
first) as soon as the command line is parsed. From then on the terminal is ready
to type into: keys are echoed by the terminal and wait in its input queue; the
REPL takes over the same line (``handover``) and reads them as the first
characters of the first message. Nothing typed is lost. Only on a terminal: with
piped input or output nothing is drawn early.

Enter stays Enter. A terminal in its ordinary (cooked) mode turns the Enter key's
carriage return into a newline as it queues it, and prompt_toolkit reads a newline
as Ctrl-J, "insert a new line": a message sent before the REPL took over would sit
in the input box, never sent. So from the first prompt until the REPL takes over
(:func:`give_back`, as its first prompt is drawn: keys already queued keep their
carriage return) the terminal keeps a carriage return as typed (``stty -icrnl``).
Only that long: in cooked mode a terminal pastes a newline as a carriage return
too, so a paste while a turn runs would become one message per line. The settings
are put back at exit as well, should the REPL never take over.

Lines typed sooner still, before the first prompt was drawn (typed ahead at the
shell while dm_cc starts), were queued with a newline for their Enter already: as
it keeps Enter, :func:`keep_enter` takes those whole lines out of the queue (only
whole lines can be read from a terminal in this mode), and the REPL reads them
first (:func:`typed_early`), each Enter an Enter.

No import here may be heavy: this runs before anything else of the REPL.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import sys
import termios
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

PROMPT = "dm_cc> "


def early_prompt() -> bool:
    """Draw the first prompt now, when both ends are a terminal; True if drawn."""
    try:
        if not (os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())):
            return False
    except (AttributeError, ValueError, OSError):
        return False
    keep_enter(sys.stdin.fileno())
    sys.stdout.write(PROMPT)
    sys.stdout.flush()
    return True


_kept: list[tuple[int, list[Any]]] = []   # the terminal and its settings before keep_enter
_typed: list[bytes] = []                    # whole lines typed before keep_enter


def keep_enter(fd: int) -> None:
    """Keep a carriage return as typed until :func:`give_back` (see the module
    docstring)."""
    try:
        before = termios.tcgetattr(fd)
        after = termios.tcgetattr(fd)
        after[0] &= ~termios.ICRNL       # the input flags
        termios.tcsetattr(fd, termios.TCSANOW, after)
    except termios.error:
        return
    _kept.append((fd, before))
    atexit.register(give_back)
    if before[3] & termios.ICANON and before[0] & termios.ICRNL:
        _typed.append(_lines_queued(fd))


def _lines_queued(fd: int) -> bytes:
    """The whole lines waiting in the terminal's queue, their newline (an Enter
    queued while the terminal turned it into one) back to a carriage return.
    A terminal in this mode makes only whole lines readable, one per read; an
    empty read is a Ctrl-D typed then (taken, as the terminal would take it)."""
    taken = b""
    try:
        while select.select([fd], [], [], 0)[0]:
            line = os.read(fd, 4096)
            if not line:
                break
            taken += line
    except OSError:
        pass
    return taken.replace(b"\n", b"\r")


def typed_early() -> str:
    """The lines :func:`keep_enter` took out of the terminal's queue, once: the first
    keys the REPL reads."""
    typed = b"".join(_typed)
    _typed.clear()
    return typed.decode("utf-8", "replace")


def give_back() -> None:
    """Put the terminal's settings back as they were before :func:`keep_enter`
    (nothing when it kept none)."""
    while _kept:
        fd, before = _kept.pop()
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, before)
