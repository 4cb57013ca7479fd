"""Large pastes at the prompt: shown as a placeholder, sent whole (as Claude Code does).

    pastes = Pastes()
    shown = pastes.shown(text)       # "[pasted 3000 lines #1]" for a large paste, else text
    sent = pastes.expand(line)       # each placeholder in the line replaced by its paste

A 3,000-line paste would fill the input box and push everything else off the
screen; its placeholder stands in the box instead, where it can be moved, typed
around or deleted like any text (delete part of it and the paste is dropped: what
is left is sent as typed). The placeholders are numbered for the life of the
prompt, so a message recalled from this session's history (Up) still carries its
paste; one from an earlier session's history is only its placeholder's text.
"""

from __future__ import annotations

import re

from dm_cc.config import counted

PASTE_LINES = 10        # a paste of more lines than this is shown as a placeholder
PASTE_CHARS = 1000      # and one of more characters than this (one long line)


class Pastes:
    """The large pastes of one prompt, by their placeholders."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None

    def shown(self, text: str) -> str:
        """What the input box shows of a paste: ``text``, or a placeholder for it."""
        lines = len(text.splitlines())
        if lines <= PASTE_LINES and len(text) <= PASTE_CHARS:
            return text
        size = counted(lines, "line") if lines > 1 else counted(len(text), "character")
        placeholder = f"[pasted {size} #{len(self._texts) + 1}]"
        self._texts[placeholder] = text
        self._pattern = re.compile("|".join(map(re.escape, self._texts)))
        return placeholder

    def expand(self, line: str) -> str:
        """``line`` with each placeholder replaced by its paste (a paste's own text is
        not searched again: a paste that holds a placeholder stays as pasted)."""
        if self._pattern is None:
            return line
        return self._pattern.sub(lambda found: self._texts[found.group(0)], line)
