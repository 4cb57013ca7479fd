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

    return spelled_as_written(export_claude(rules), rules)


def _opencode(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.opencode import export_opencode

    return spelled_as_written(export_opencode(rules), rules)


def _codex(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.codex import export_codex

    return spelled_as_written(export_codex(rules), rules)


def _gemini(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.gemini import export_gemini

    return spelled_as_written(export_gemini(rules), rules)


def spelled_as_written(exported: Exported, rules: Sequence[Rule]) -> Exported:
    """Say which deny and ask shell rules name an option: dm_cc also matches other
    spellings of it (``rm -rf *`` catches ``rm -r -f x``, ``git push --force *``
    catches ``git push -f``), which every target matches only as written."""
    from dm_cc.policy.defaults import GUARDRAIL_SOURCE
    from dm_cc.policy.exporters.model import describe, has_option

    for rule in rules:
        if rule.permission in ("bash", "*") and rule.action != "allow" \
                and rule.source != GUARDRAIL_SOURCE and has_option(rule.pattern):
            exported.notes.append(f"{describe(rule)}: {exported.target} matches its options "
                                  "as written; dm_cc also catches other spellings of them")
    return exported


# name: (what it writes, exporter), in help order
EXPORTERS: dict[str, tuple[str, Exporter]] = {
    "claude": ("Claude Code settings.json (permissions.allow/ask/deny)", _claude),
    "opencode": ("opencode.json (permission)", _opencode),
    "codex": ("Codex .rules (prefix_rule; shell commands only)", _codex),
    "gemini": ("Gemini CLI policy .toml ([[rule]] toolName, commandPrefix, priority)", _gemini),
}

__all__ = ["EXPORTERS", "Exported"]
