"""Matching: which rule of an ordered list matches a request name (last match wins).

A :class:`Ruleset` compiles its rules once and indexes them by permission (exact
names, plus wildcard-permission rules kept in order) and, for the wildcard
languages, by the first word a rule can match. :func:`last_match` scans the
candidates from the end and stops at the first hit, which is the last match.
What is *decided* from a match (several names, withheld allows, approvals, the
ceiling, combining a request set) is :mod:`dm_cc.permissions.gate`.

Matching is deliberately asymmetric, so that every doubt falls on the safe side:

* ``deny``/``ask`` path rules match case-insensitively; ``allow`` needs exact case.
* ``deny``/``ask`` shell rules also match other spellings of their flags
  (``rm -rf *`` catches ``rm -r -f x``); ``allow`` rules match only as written.
* ``deny``/``ask`` URL rules match ignoring case (a server may ignore it in a path).
* MCP arguments are matched structurally (:class:`ArgumentsPattern`); there too
  ``deny``/``ask`` conditions ignore case and look inside arrays and objects.

Plain lists of rules are compiled once per content (:func:`compiled`), so callers
of the public ``evaluate(permission, pattern, [Rule, …])`` do not pay for
compilation on every call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from typing import NamedTuple

from dm_cc.permissions.patterns import (
    Arguments,
    ArgumentsPattern,
    PathContext,
    PathGlob,
    PathSubject,
    Wildcard,
    arguments_subject,
    path_subject,
    split_wildcard,
)
from dm_cc.permissions.rules import (
    DEFAULT_RULE,
    ENGINE_LANGUAGES,
    Language,
    Request,
    Rule,
    is_mcp_permission,
)
from dm_cc.permissions.shell.flags import FlagRule, compile_flag_rule


def _first_word_key(pattern: str) -> str | None:
    """The first word every text this pattern matches must have, if the pattern fixes it
    (the same with and without backslash escapes: a word holding a backslash is None)."""
    cut = min((i for i in (pattern.find("*"), pattern.find("?")) if i >= 0), default=-1)
    literal = pattern if cut < 0 else pattern[:cut]
    if cut >= 0 and " " not in literal:
        return None
    word = literal.split(" ", 1)[0]
    return None if "\\" in word else word


# Private-use stand-ins for a literal `*` and `?`: an escaped one in a rule, and
# every one in a command's words, so the flag matcher compares them as plain text.
_STAR, _QUESTION = "\ue000", "\ue001"


class _EscapedFlagRule:
    """A deny/ask rule with escaped wildcards, matched whatever its flags' spelling."""

    __slots__ = ("flags",)

    def __init__(self, flags: FlagRule) -> None:
        self.flags = flags

    @staticmethod
    def compile(pattern: str) -> _EscapedFlagRule | None:
        text = "*".join("".join({"*": _STAR, "?": _QUESTION}.get(ch, ch) if ch else "?"
                                for ch in piece) for piece in split_wildcard(pattern))
        flags = compile_flag_rule(text)
        return None if flags is None else _EscapedFlagRule(flags)

    def matches(self, words: Sequence[str]) -> bool:
        return self.flags.matches([w.replace("*", _STAR).replace("?", _QUESTION)
                                   for w in words])


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

    __slots__ = ("rule", "index", "context", "_permission", "__dict__")

    def __init__(self, rule: Rule, index: int, context: PathContext) -> None:
        self.rule = rule
        self.index = index
        self.context = context
        wild = "*" in rule.permission or "?" in rule.permission
        self._permission = Wildcard(rule.permission, escapes=False) if wild else None

    @property
    def strict(self) -> bool:
        return self.rule.action == "allow"

    def covers_permission(self, permission: str) -> bool:
        if self._permission is None:
            return permission == self.rule.permission
        return self._permission.match(permission)

    @cached_property
    def _path(self) -> PathGlob:
        return PathGlob(self.rule.pattern, self.context, ignore_case=not self.strict)

    @cached_property
    def _text(self) -> Wildcard:
        return Wildcard(self.rule.pattern, escapes=False)

    @cached_property
    def _shell_text(self) -> Wildcard:
        """Shell commands: a backslash escapes `*`, `?` and itself (``rm -rf /\\*``)."""
        return Wildcard(self.rule.pattern) if "\\" in self.rule.pattern else self._text

    @cached_property
    def _flags(self) -> FlagRule | _EscapedFlagRule | None:
        if self.strict:
            return None
        if "\\" in self.rule.pattern:  # escaped `*`/`?`: literal, as stand-ins
            return _EscapedFlagRule.compile(self.rule.pattern)
        return compile_flag_rule(self.rule.pattern)

    @cached_property
    def _folded(self) -> Wildcard:
        return Wildcard(self.rule.pattern, ignore_case=True, escapes=False)

    @cached_property
    def _arguments(self) -> ArgumentsPattern:
        return ArgumentsPattern(self.rule.pattern, fold=not self.strict)

    def matches(self, subject: Subject) -> bool:
        if subject.path is not None:
            return self._path.match(subject.path)
        if subject.arguments is not None:
            return self._arguments.match(subject.arguments)
        if subject.language == "shell":
            if self._shell_text.match(subject.text):
                return True
            flags = self._flags
            return flags is not None and flags.matches(subject.words)
        if self._text.match(subject.text):
            return True
        return subject.fold and not self.strict and self._folded.match(subject.text)


class _PermissionIndex:
    """The rules that can apply to one permission, split by first word."""

    __slots__ = ("by_first_word", "general", "empty")

    def __init__(self, rules: list[CompiledRule], words: bool) -> None:
        self.by_first_word: dict[str, list[CompiledRule]] = {}
        self.general: list[CompiledRule] = []
        for compiled in rules:
            key = _first_word_key(compiled.rule.pattern) if words else None
            if key is None:
                self.general.append(compiled)
            else:
                self.by_first_word.setdefault(key, []).append(compiled)
        self.empty = not self.by_first_word and not self.general

    def last_match(self, subject: Subject) -> CompiledRule | None:
        best: CompiledRule | None = None
        if self.by_first_word:
            for compiled in reversed(self.by_first_word.get(subject.text.split(" ", 1)[0], ())):
                if compiled.matches(subject):
                    best = compiled
                    break
        floor = -1 if best is None else best.index
        for compiled in reversed(self.general):
            if compiled.index < floor:
                break
            if compiled.matches(subject):
                return compiled
        return best


class Ruleset:
    """An ordered, compiled, immutable list of rules.

    ``context`` anchors path patterns (the project root, the home directory); with
    none, ``~/`` and project-relative patterns match only requests in their own
    form (no process state is consulted: the engine is pure).
    """

    def __init__(self, rules: Iterable[Rule], context: PathContext | None = None) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.context = context if context is not None else NO_CONTEXT
        self._compiled = [CompiledRule(rule, i, self.context) for i, rule in enumerate(self.rules)]
        self._exact: dict[str, list[CompiledRule]] = {}
        self._wild: list[CompiledRule] = []
        for compiled_rule in self._compiled:
            if compiled_rule._permission is None:
                self._exact.setdefault(compiled_rule.rule.permission, []).append(compiled_rule)
            else:
                self._wild.append(compiled_rule)
        self._indexes: dict[tuple[str, Language], _PermissionIndex] = {}

    def __len__(self) -> int:
        return len(self.rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def candidates(self, permission: str) -> list[CompiledRule]:
        """Every rule whose permission covers ``permission``, in order."""
        exact = self._exact.get(permission, [])
        wild = [c for c in self._wild if c.covers_permission(permission)]
        return sorted(exact + wild, key=lambda c: c.index) if wild else list(exact)

    def index(self, permission: str, language: Language) -> _PermissionIndex:
        """The rules that can apply to ``permission`` requests read in ``language``,
        indexed (built on first use)."""
        key = (permission, language)
        index = self._indexes.get(key)
        if index is None:
            words = language != "path" and not is_mcp_permission(permission)
            index = _PermissionIndex(self.candidates(permission), words)
            self._indexes[key] = index
        return index

    def last_match(self, permission: str, subject: Subject) -> int | None:
        """The index of the last rule matching ``subject``, if any."""
        hit = self.index(permission, subject.language).last_match(subject)
        return None if hit is None else hit.index

    def considered(self, request: Request) -> list[tuple[int, tuple[str, ...]]]:
        """Every rule whose permission covers the request's, in order: its position
        and the request names it matches (``dm_cc policy explain``, decision hooks)."""
        candidates = self.candidates(request.permission)
        if not candidates:
            return []
        named = [(name, request.words) for name in request.names]
        named += [(" ".join(words), words) for words in request.other_names]
        subjects = [(name, subject(request.permission, name, words, self.context,
                                   request.language))
                    for name, words in named]
        return [(candidate.index, tuple(name for name, prepared in subjects
                                        if candidate.matches(prepared)))
                for candidate in candidates]


NO_CONTEXT = PathContext(root=None, home=None)

RulesetLike = Ruleset | Sequence[Rule]

_COMPILED: dict[tuple[tuple[Rule, ...], PathContext], Ruleset] = {}
_COMPILED_MAX = 64


def compiled(rules: RulesetLike, context: PathContext | None = None) -> Ruleset:
    """``rules`` compiled under ``context``: a Ruleset is used as it is; a plain list
    is compiled once per content and context and then found again (a bounded cache:
    a list changed since is different content, so it is compiled anew)."""
    if isinstance(rules, Ruleset):
        return rules
    key = (tuple(rules), context if context is not None else NO_CONTEXT)
    ruleset = _COMPILED.get(key)
    if ruleset is None:
        if len(_COMPILED) >= _COMPILED_MAX:
            del _COMPILED[next(iter(_COMPILED))]
        ruleset = _COMPILED[key] = Ruleset(key[0], key[1])
    return ruleset


def language_for(permission: str, language: Language | None = None) -> Language:
    """The language a request of ``permission`` is read in: ``language`` when its
    maker said, else the engine's own permissions' (:data:`ENGINE_LANGUAGES`), else
    a name."""
    if language is not None:
        return language
    return ENGINE_LANGUAGES.get(permission, "name")


def subject(permission: str, name: str, words: Sequence[str] | None,
            context: PathContext, language: Language | None = None) -> Subject:
    """A request name prepared once for matching against many rules; ``language``
    is the request's (:meth:`Request.reading`)."""
    language = language_for(permission, language)
    path = path_subject(name, context) if language == "path" else None
    arguments = arguments_subject(name) if is_mcp_permission(permission) else None
    return Subject(language, name, tuple(words) if words is not None else tuple(name.split()), path,
                   arguments)


def last_match(permission: str, name: str, words: Sequence[str] | None,
               rulesets: Sequence[Ruleset], language: Language | None = None
               ) -> tuple[int, int] | None:
    """Where the last matching rule of the concatenated rulesets is: (which ruleset,
    which rule in it); None when no rule matches. A position, not the rule: a plain
    list compiled from the cache holds equal rules, and the caller returns its own."""
    language = language_for(permission, language)
    subjects: dict[PathContext, Subject] = {}
    for position in range(len(rulesets) - 1, -1, -1):
        ruleset = rulesets[position]
        prepared = subjects.get(ruleset.context)
        if prepared is None:
            prepared = subjects[ruleset.context] = subject(permission, name, words,
                                                           ruleset.context, language)
        index = ruleset.index(permission, language)
        if index.empty:  # most layers have no rule for a given permission
            continue
        hit = index.last_match(prepared)
        if hit is not None:
            return position, hit.index
    return None


def prepared(rulesets: Iterable[RulesetLike]) -> tuple[list[tuple[Rule, ...]], list[Ruleset]]:
    """Each ruleset's rules (the caller's own objects, which a match is reported as)
    and its compiled form."""
    given, sets = [], []
    for rules in rulesets:
        if isinstance(rules, Ruleset):
            given.append(rules.rules)
            sets.append(rules)
        else:
            given.append(tuple(rules))
            sets.append(compiled(given[-1]))
    return given, sets


def evaluate(permission: str, pattern: str, *rulesets: RulesetLike,
             language: Language | None = None) -> Rule:
    """The last rule of the concatenated rulesets that matches (the very object the
    caller passed); else ``ask`` (:data:`DEFAULT_RULE`, source ``default``).
    ``language``: how ``pattern`` is read -- a tool's permission has its argument's
    (``dm_cc.tools.catalog.language_of``: ``path`` for read and edit, ``shell`` for
    bash); None: the engine's own permissions' language, else a name."""
    given, sets = prepared(rulesets)
    hit = last_match(permission, pattern, None, sets, language)
    return DEFAULT_RULE if hit is None else given[hit[0]][hit[1]]
