"""dm_cc policies written as other assistants' permission settings.

Each exporter takes an ordered list of dm_cc rules (last match wins, no match:
ask) and returns an :class:`Exported`: the target file's text and what could not
be said. An export may be stricter than the policy, never looser (model.py).

    EXPORTERS["claude"]    Claude Code settings.json   (claude.py)
    EXPORTERS["opencode"]  opencode.json               (opencode.py)
    EXPORTERS["codex"]     Codex .rules (execpolicy)   (codex.py)
    EXPORTERS["gemini"]    Gemini CLI policy .toml     (gemini.py)

Which rules are exported (the built-in defaults, the layers in force) is
stack.py's business. The mapping tables live in docs/exporters.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dm_cc.permissions import Rule
from dm_cc.policy.exporters.model import Exported

Exporter = Callable[[Sequence[Rule]], Exported]


def _claude(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.claude import export_claude

    return export_claude(rules)


def _opencode(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.opencode import export_opencode

    return export_opencode(rules)


def _codex(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.codex import export_codex

    return export_codex(rules)


def _gemini(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.gemini import export_gemini

    return export_gemini(rules)


# name: (what it writes, exporter), in help order
EXPORTERS: dict[str, tuple[str, Exporter]] = {
    "claude": ("Claude Code settings.json (permissions.allow/ask/deny)", _claude),
    "opencode": ("opencode.json (permission)", _opencode),
    "codex": ("Codex .rules (prefix_rule; shell commands only)", _codex),
    "gemini": ("Gemini CLI policy .toml ([[rule]] toolName, commandPrefix, priority)", _gemini),
}

__all__ = ["EXPORTERS", "Exported"]
