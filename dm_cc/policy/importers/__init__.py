"""Policies of other assistants, rewritten as dm_cc policy files.

Each importer reads one file format and returns an :class:`Imported`: ordered
entries (a rule, or a comment for what dm_cc cannot express), per-agent entries,
inline tests that pin what the source tool would decide, and the list of what
was not imported. :func:`render_policy` writes it as a policy file (YAML with comments);
the command ``dm_cc policy import`` checks the result loads before writing it.

    IMPORTERS["claude"]    Claude Code settings.json   (claude.py)
    IMPORTERS["opencode"]  opencode.json / .jsonc      (opencode.py)
    IMPORTERS["codex"]     Codex .rules (execpolicy)   (codex.py)
    IMPORTERS["gemini"]    Gemini CLI policy .toml     (gemini.py)

The mapping tables live in docs/importers.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dm_cc.policy.importers.model import Entry, Imported, InlineTestEntry, InvalidSource
from dm_cc.policy.importers.render import render_policy

Importer = Callable[[Path], Imported]


def _claude(path: Path) -> Imported:
    from dm_cc.policy.importers.claude import import_claude

    return import_claude(path)


def _opencode(path: Path) -> Imported:
    from dm_cc.policy.importers.opencode import import_opencode

    return import_opencode(path)


def _codex(path: Path) -> Imported:
    from dm_cc.policy.importers.codex import import_codex

    return import_codex(path)


def _gemini(path: Path) -> Imported:
    from dm_cc.policy.importers.gemini import import_gemini

    return import_gemini(path)


# name: (what it reads, importer), in help order
IMPORTERS: dict[str, tuple[str, Importer]] = {
    "claude": ("Claude Code settings.json (permissions.allow/ask/deny)", _claude),
    "opencode": ("opencode.json (permission, agent.<name>.permission)", _opencode),
    "codex": ("Codex .rules (prefix_rule; match/not_match become tests)", _codex),
    "gemini": ("Gemini CLI policy .toml ([[rule]] toolName, commandPrefix, priority)", _gemini),
}

__all__ = ["IMPORTERS", "Entry", "Imported", "InlineTestEntry", "InvalidSource", "render_policy"]
