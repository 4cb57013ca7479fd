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
in the input box, never sent. So, for as long as dm_cc runs, the terminal keeps a
carriage return as typed (``stty -icrnl``): keys typed before the REPL reads them
(at start, or while a turn runs) arrive as they were pressed, Enter sends. The
terminal's settings are put back as they were when dm_cc exits.

No import here may be heavy: this runs before anything else of the REPL.
"""

from __future__ import annotations

import atexit
import contextlib
import os
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


def keep_enter(fd: int) -> None:
    """Keep a carriage return as typed until dm_cc exits (see the module docstring)."""
    try:
        before = termios.tcgetattr(fd)
        after = termios.tcgetattr(fd)
        after[0] &= ~termios.ICRNL       # the input flags
        termios.tcsetattr(fd, termios.TCSANOW, after)
    except termios.error:
        return
    atexit.register(_restore, fd, before)


def _restore(fd: int, attributes: list[Any]) -> None:
    with contextlib.suppress(termios.error):
        termios.tcsetattr(fd, termios.TCSANOW, attributes)
