"""The first prompt, drawn before prompt_toolkit is even imported.

Importing asyncio and prompt_toolkit takes longer than all of ``dm_cc --version``,
so the interactive session writes its prompt (the same ``dm_cc> `` the REPL draws
first) as soon as the command line is parsed. From then on the terminal is ready
to type into: keys are echoed by the terminal and wait in its input queue; the
REPL takes over the same line (``handover``) and reads them as the first
characters of the first message. Nothing typed is lost. Only on a terminal: with
piped input or output nothing is drawn early.

No import here may be heavy: this runs before anything else of the REPL.
"""

from __future__ import annotations

import os
import sys

PROMPT = "dm_cc> "


def early_prompt() -> bool:
    """Draw the first prompt now, when both ends are a terminal; True if drawn."""
    try:
        if not (os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())):
            return False
    except (AttributeError, ValueError, OSError):
        return False
    sys.stdout.write(PROMPT)
    sys.stdout.flush()
    return True
