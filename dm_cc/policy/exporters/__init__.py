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

    kept, said = without_redirects(rules, "claude")
    return spelled_as_written(export_claude(kept), rules, said)


def _opencode(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.opencode import export_opencode

    kept, said = without_redirects(rules, "opencode")
    return spelled_as_written(export_opencode(kept), rules, said)


def _codex(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.codex import export_codex

    kept, said = without_redirects(rules, "codex")
    return spelled_as_written(export_codex(kept), rules, said)


def _gemini(rules: Sequence[Rule]) -> Exported:
    from dm_cc.policy.exporters.gemini import export_gemini

    kept, said = without_redirects(rules, "gemini")
    return spelled_as_written(export_gemini(kept), rules, said)


def without_redirects(rules: Sequence[Rule], target: str) -> tuple[list[Rule], list[str]]:
    """dm_cc's ``redirect`` rules, which no target has a rule for, and what is said of
    them. An allow is left out (never looser; Gemini CLI's ``allowRedirection`` is
    never written: Gemini then judges no redirect's file, which dm_cc judges as an
    edit or read, protected paths included). A deny or ask is written wider, as a
    ``bash`` rule of its pattern (the command, redirected or not) after all the
    others, so no rule the target reads later overrides it; the exporters write the
    denies it could override again after an ask. Gemini CLI asks about every
    redirected command an allow matches by itself, so an ask needs nothing there."""
    from dm_cc.permissions import REDIRECT, Rule
    from dm_cc.policy.exporters.model import describe

    kept: list[Rule] = []
    wider: list[Rule] = []
    said: list[str] = []
    for rule in rules:
        if rule.permission != REDIRECT:
            kept.append(rule)
        elif rule.action == "allow":
            said.append(f"{describe(rule)}: not exported ("
                        + ("Gemini CLI asks about a redirected command unless its rule says "
                           "allowRedirection, never written: Gemini judges no redirect's file, "
                           "which dm_cc judges as an edit or read)" if target == "gemini"
                           else f"{target} has no rule about redirections)"))
        elif rule.action == "ask" and target == "gemini":
            said.append(f"{describe(rule)}: Gemini CLI asks about every redirected command "
                        "an allow matches (no allowRedirection is written)")
        else:
            wider.append(Rule("bash", rule.pattern, rule.action, rule.reason, rule.source))
            said.append(f"{describe(rule)}: {target} has no rule about redirections; written "
                        f"wider, as {rule.action} bash {rule.pattern!r} after every other rule "
                        "(stricter than the policy)")
    return kept + wider, said


def spelled_as_written(exported: Exported, rules: Sequence[Rule],
                       said: Sequence[str] = ()) -> Exported:
    """Say which deny and ask shell rules name an option: dm_cc also matches other
    spellings of it (``rm -rf *`` catches ``rm -r -f x``, ``git push --force *``
    catches ``git push -f``), which every target matches only as written; and what
    became of the ``redirect`` rules (``said``: :func:`without_redirects`)."""
    from dm_cc.policy.defaults import GUARDRAIL_SOURCE
    from dm_cc.policy.exporters.model import describe, has_option

    exported.notes.extend(said)

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
