"""What an exporter produces, and the one rule for what it cannot say.

An export may be stricter than the dm_cc policy, never looser (the importers'
principle, turned round: docs/exporters.md):

* an **allow** the target cannot say exactly is left out (the target then asks,
  or a stricter rule of the export decides), and said;
* a **deny or ask** it cannot say is written *wider* (the whole tool, the
  command's first words) and said (:meth:`Exported.widen`); when not even that can
  be said it is *refused* (:meth:`Exported.refuse`): ``dm_cc policy export``
  writes nothing and exits 1 unless ``--lossy`` leaves it out;
* a rule about something the target does not have (dm_cc's ``doom_loop``, a
  Codex file's every non-shell tool) decides nothing there: left out, and said
  (:class:`SaysNothing`).

The shell-pattern helpers at the end read a dm_cc shell pattern as its words:
which are literal, where the first wildcard is, what the literal text is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TypeVar

from dm_cc.permissions import Rule
from dm_cc.policy.defaults import GUARDRAIL_SOURCE
from dm_cc.policy.importers.model import SaysNothing, Unexpressible

__all__ = ["Exported", "SaysNothing", "Unexpressible"]

T = TypeVar("T")


@dataclass(slots=True)
class Exported:
    """A dm_cc policy written in another tool's format: the file's text, and what
    could not be said (``notes``: left out or written wider, said on stderr;
    ``refused``: a deny or ask left out -- a loosening, so the export fails unless
    ``--lossy``)."""

    target: str
    text: str = ""
    notes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def drop(self, rule: Rule, why: str) -> None:
        self.notes.append(f"{describe(rule)}: not exported ({why})")

    def widen(self, rule: Rule, why: str, wider: str) -> None:
        self.notes.append(f"{describe(rule)}: {why}; written wider, as {wider} "
                          "(stricter than the policy)")

    def note(self, rule: Rule, what: str) -> None:
        self.notes.append(f"{describe(rule)}: {what}")

    def refuse(self, rule: Rule, why: str) -> None:
        self.refused.append(f"{describe(rule)}: {why}")

    def unsaid(self, rule: Rule, exc: Unexpressible) -> None:
        """A rule that cannot be said at all: an allow, or one that decides nothing
        in the target, is left out; a deny or ask is refused."""
        if isinstance(exc, SaysNothing) or rule.action == "allow":
            self.drop(rule, str(exc))
        elif rule.source == GUARDRAIL_SOURCE:   # dm_cc's own last line, not the policy's
            self.drop(rule, f"{exc}; a dm_cc guardrail the target cannot say")
        else:
            self.refuse(rule, str(exc))


def describe(rule: Rule) -> str:
    """``deny bash 'git push *' (.dm_cc/policy.yaml:4)``."""
    where = f" ({rule.source})" if rule.source not in ("inline", "") else ""
    return f"{rule.action} {rule.permission} {rule.pattern!r}{where}"


def catch_all(rule: Rule) -> bool:
    """``* *``: every request of every permission."""
    return rule.permission == "*" and rule.pattern in ("*", "**")


def permission_overlaps(a: str, b: str) -> bool:
    """Whether two permission names (wildcards allowed) can name one permission."""
    if "*" in a or "?" in a:
        return "*" in b or "?" in b or fnmatchcase(b, a)
    return fnmatchcase(a, b) if ("*" in b or "?" in b) else a == b


def omissible_ask(rules: list[Rule], index: int) -> bool:
    """Whether the ask ``rules[index]`` may be left to a target whose own default
    asks and whose rules are strictest-wins (Claude Code, Codex): no earlier allow
    of the policy is about its permissions, so where it decides, nothing exported
    allows (an earlier deny that matches makes the target stricter, never looser)."""
    rule = rules[index]
    return rule.action == "ask" and not any(
        earlier.action == "allow" and permission_overlaps(earlier.permission, rule.permission)
        for earlier in rules[:index])


def denies_again(rules: list[Rule], index: int) -> list[Rule]:
    """For a last-match target (opencode, Gemini CLI), the earlier denies to write
    again after the ask ``rules[index]``: an ask the target reads more widely than
    dm_cc (written wider, a prefix that is plain text, a ``*`` that crosses ``/``)
    would otherwise override a deny the policy keeps. Written again later, a deny
    is only ever stricter."""
    rule = rules[index]
    if rule.action != "ask":
        return []
    return [earlier for earlier in rules[:index] if earlier.action == "deny"
            and permission_overlaps(earlier.permission, rule.permission)]


# --------------------------------------------------------------------------- shell patterns


@dataclass(frozen=True, slots=True)
class Word:
    """One space-separated word of a dm_cc shell pattern: its literal text (escapes
    resolved) when it holds no wildcard, else None; ``raw`` as written."""

    raw: str
    literal: str | None


def shell_words(pattern: str) -> list[Word]:
    """A dm_cc shell pattern's words (``\\*``, ``\\?``, ``\\\\`` are literal)."""
    out = []
    for raw in pattern.split(" "):
        if raw == "":
            continue
        text, wild, i = [], False, 0
        while i < len(raw):
            ch = raw[i]
            if ch == "\\" and i + 1 < len(raw):
                text.append(raw[i + 1])
                i += 2
                continue
            wild = wild or ch in "*?"
            text.append(ch)
            i += 1
        out.append(Word(raw, None if wild else "".join(text)))
    return out


def literal_words(pattern: str) -> list[str] | None:
    """The words of a pattern with no wildcard (it matches exactly them); else None."""
    words = shell_words(pattern)
    if any(w.literal is None for w in words):
        return None
    return [w.literal for w in words if w.literal is not None]


def prefix_words(pattern: str) -> list[str] | None:
    """``git push *`` → ``["git", "push"]``: the literal words of a pattern that is
    those words then any arguments (dm_cc: the words alone, or followed by a space
    and anything); None for any other form."""
    words = shell_words(pattern)
    if len(words) < 2 or words[-1].raw != "*":
        return None
    head = [w.literal for w in words[:-1]]
    return None if any(w is None for w in head) else [w for w in head if w is not None]


def leading_words(pattern: str) -> list[str]:
    """The literal words before the first word holding a wildcard: a deny or ask
    of them and anything after covers the pattern (``git * main`` → ``["git"]``)."""
    out = []
    for word in shell_words(pattern):
        if word.literal is None:
            break
        out.append(word.literal)
    return out


def has_option(pattern: str) -> bool:
    """Whether a pattern names an option (``-f``, ``--force``): dm_cc's deny and ask
    rules also match other spellings of it, which no target does."""
    return any(w.raw.startswith("-") and len(w.raw) > 1 for w in shell_words(pattern))


# --------------------------------------------------------------------------- paths

_BRACE = re.compile(r"(?<!\\)\{([^{}]*)(?<!\\)\}")


def brace_expansions(pattern: str) -> Iterator[str]:
    """A dm_cc glob's ``{a,b}`` alternatives spelled out (``./s{,/**}`` → ``./s``,
    ``./s/**``); the pattern itself when it has none."""
    found = _BRACE.search(pattern)
    if found is None:
        yield pattern
        return
    for choice in found.group(1).split(","):
        yield from brace_expansions(pattern[:found.start()] + choice + pattern[found.end():])


def said(out: Exported, rule: Rule, convert: Callable[[Rule], list[T]],
         wider: Callable[[Rule], list[T]] | None = None, *,
         default_asks: bool = False) -> list[T]:
    """What ``convert`` makes of ``rule`` in the target; for what it cannot say, the
    one rule of this module: a deny or ask written ``wider`` (when that can say it),
    else an allow or a rule that decides nothing there left out, a deny or ask
    refused -- but an ask left to the target's own default when it asks there
    (``default_asks``: :func:`omissible_ask`), and a dm_cc guardrail (``rm -rf /``:
    dm_cc's own last line, not the policy's) left out rather than widened into a
    deny of every ``rm -r``. Every case but the first is said in
    ``out``."""
    try:
        return convert(rule)
    except SaysNothing as exc:
        out.drop(rule, str(exc))
        return []
    except Unexpressible as exc:
        if rule.action != "allow" and wider is not None and rule.source != GUARDRAIL_SOURCE:
            try:
                items = wider(rule)
            except Unexpressible:
                items = []
            if items:
                out.widen(rule, str(exc), ", ".join(str(item) for item in items))
                return items
        if default_asks and rule.action == "ask" and not isinstance(exc, SaysNothing):
            out.note(rule, f"{exc}; left to the target's own default, which asks")
            return []
        out.unsaid(rule, exc)
        return []
