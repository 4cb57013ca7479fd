"""One rule against one request name: what "this rule matches" means, rule by rule.

A :class:`CompiledRule` holds a rule's matchers, each built on first use for the
pattern language a request is read in (:class:`Subject`). This is the definition
of a match; the index that finds the *last* matching rule among many
(:mod:`dm_cc.permissions.index`) must agree with trying every rule with these.

Matching is deliberately asymmetric, so that every doubt falls on the safe side:

* ``deny``/``ask`` path rules match case-insensitively; ``allow`` needs exact case.
* ``deny``/``ask`` shell rules also match other spellings of their flags
  (``rm -rf *`` catches ``rm -r -f x``); ``allow`` rules match only as written.
* ``deny``/``ask`` URL rules match ignoring case (a server may ignore it in a path).
* MCP arguments are matched structurally (:class:`ArgumentsPattern`); there too
  ``deny``/``ask`` conditions ignore case and look inside arrays and objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import NamedTuple

from dm_cc.permissions.patterns import (
    Arguments,
    ArgumentsPattern,
    PathContext,
    PathGlob,
    PathSubject,
    Wildcard,
    split_wildcard,
)
from dm_cc.permissions.rules import NAMED_ONLY, Language, Rule
from dm_cc.permissions.shell.flags import FlagRule, compile_flag_rule

# Private-use stand-ins for a literal `*` and `?`: an escaped one in a rule, and
# every one in a command's words, so the flag matcher compares them as plain text.
_STAR, _QUESTION = "\ue000", "\ue001"


class EscapedFlagRule:
    """A deny/ask rule with escaped wildcards, matched whatever its flags' spelling."""

    __slots__ = ("flags",)

    def __init__(self, flags: FlagRule) -> None:
        self.flags = flags

    @staticmethod
    def compile(pattern: str) -> EscapedFlagRule | None:
        text = "*".join("".join({"*": _STAR, "?": _QUESTION}.get(ch, ch) if ch else "?"
                                for ch in piece) for piece in split_wildcard(pattern))
        flags = compile_flag_rule(text)
        return None if flags is None else EscapedFlagRule(flags)

    def matches(self, words: Sequence[str]) -> bool:
        return self.flags.matches(escape_words(words))


def escape_words(words: Sequence[str]) -> tuple[str, ...]:
    """A command's words with every `*` and `?` as the stand-ins an escaped one in a
    rule is (:class:`EscapedFlagRule`), so that they compare as plain text."""
    joined = "".join(words)
    if "*" not in joined and "?" not in joined:  # (most commands: the words as they are)
        return tuple(words)
    return tuple(escape_word(w) for w in words)


def escape_word(word: str) -> str:
    """One word as :func:`escape_words` gives it."""
    return word.replace("*", _STAR).replace("?", _QUESTION) if "*" in word or "?" in word \
        else word


class Subject(NamedTuple):
    """A request name prepared once for matching against many rules."""

    language: Language
    text: str
    words: tuple[str, ...]
    path: PathSubject | None
    arguments: Arguments | None = None  # an MCP call's: matched structurally

    @property
    def fold(self) -> bool:
        """Deny and ask rules also match ignoring case (URLs and hosts)."""
        return self.language == "url"


class CompiledRule:
    """A rule with its matchers, built on first use for each pattern language."""

    __slots__ = ("rule", "index", "context", "permission", "__dict__")

    def __init__(self, rule: Rule, index: int, context: PathContext) -> None:
        self.rule = rule
        self.index = index
        self.context = context
        wild = "*" in rule.permission or "?" in rule.permission
        #: The rule's permission as a wildcard; None: a name, compared as it is.
        self.permission = Wildcard(rule.permission, escapes=False) if wild else None

    @property
    def strict(self) -> bool:
        return self.rule.action == "allow"

    def covers_permission(self, permission: str) -> bool:
        if self.permission is None:
            return permission == self.rule.permission
        return permission not in NAMED_ONLY and self.permission.match(permission)

    @cached_property
    def path(self) -> PathGlob:
        return PathGlob(self.rule.pattern, self.context, ignore_case=not self.strict)

    @cached_property
    def text(self) -> Wildcard:
        return Wildcard(self.rule.pattern, escapes=False)

    @cached_property
    def shell_text(self) -> Wildcard:
        """Shell commands: a backslash escapes `*`, `?` and itself (``rm -rf /\\*``)."""
        return Wildcard(self.rule.pattern) if "\\" in self.rule.pattern else self.text

    @cached_property
    def flags(self) -> FlagRule | EscapedFlagRule | None:
        if self.strict:
            return None
        if "\\" in self.rule.pattern:  # escaped `*`/`?`: literal, as stand-ins
            return EscapedFlagRule.compile(self.rule.pattern)
        return compile_flag_rule(self.rule.pattern)

    @cached_property
    def folded(self) -> Wildcard:
        return Wildcard(self.rule.pattern, ignore_case=True, escapes=False)

    @cached_property
    def arguments(self) -> ArgumentsPattern:
        return ArgumentsPattern(self.rule.pattern, fold=not self.strict)

    def matches(self, subject: Subject) -> bool:
        if subject.path is not None:
            return self.path.match(subject.path)
        if subject.arguments is not None:
            return self.arguments.match(subject.arguments)
        if subject.language == "shell":
            if self.shell_text.match(subject.text):
                return True
            flags = self.flags
            return flags is not None and flags.matches(subject.words)
        if self.text.match(subject.text):
            return True
        return subject.fold and not self.strict and self.folded.match(subject.text)
