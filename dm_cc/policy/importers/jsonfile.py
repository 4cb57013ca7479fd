"""Reading a JSON (or JSONC: comments, trailing commas) settings file, with errors
that name ``file:line``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dm_cc.config import display_path
from dm_cc.errors import PolicyError

# a string, a // or /* */ comment, or a trailing comma: one before a closing bracket,
# with only blanks and comments between (``1, // last\n]``: opencode reads it so)
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/'
                     r'|,(?=(?:\s|//[^\n]*|/\*.*?\*/)*[}\]])', re.S)


def _strip_jsonc(text: str) -> str:
    """JSONC as JSON, keeping every newline (so line numbers still hold)."""
    def keep(match: re.Match[str]) -> str:
        token = match.group()
        if token.startswith('"'):
            return token
        return "\n" * token.count("\n") if token.startswith("/*") else ""
    return _TOKENS.sub(keep, text)


def read_source(path: Path) -> tuple[str, str]:
    """(the file as shown, its text): every importer reads its source so;
    PolicyError when it is missing or unreadable."""
    shown = display_path(path)
    try:
        return shown, path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(shown, None, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(shown, None, f"cannot read: {exc}") from None


def read_json(path: Path, *, jsonc: bool = False) -> tuple[str, Any]:
    """(the file as shown, its value); PolicyError naming file:line when it is not JSON."""
    shown, text = read_source(path)
    try:
        return shown, json.loads(_strip_jsonc(text) if jsonc else text)
    except json.JSONDecodeError as exc:
        raise PolicyError(shown, exc.lineno, f"not valid JSON: {exc.msg}") from None


def line_with(path: Path, *needles: str) -> int | None:
    """The first line of ``path`` holding every needle as a JSON string (for an
    error's ``file:line``; None when there is none)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    quoted = [json.dumps(needle) for needle in needles]
    return next((number for number, line in enumerate(lines, 1)
                 if all(q in line for q in quoted)), None)
