"""Matching: which rule of an ordered list matches a request name (last match wins).

A :class:`Ruleset` compiles its rules once (each a :class:`~.matchers.CompiledRule`:
what "this rule matches" means, language by language) and indexes them by
permission (exact names, plus wildcard-permission rules kept in order) and, per
permission and pattern language, by what every text a rule matches starts with
(:class:`~.index.RuleIndex`), which finds the last matching rule without trying
the others. What is *decided* from a match (several names, withheld allows,
approvals, the ceiling, combining a request set) is :mod:`dm_cc.permissions.gate`.

Plain lists of rules are compiled once per content (:func:`compiled`), so callers
of the public ``evaluate(permission, pattern, [Rule, …])`` do not pay for
compilation on every call; the same list object passed again is found again by
comparing its items with the ones it had (no hashing of every rule per call).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

from dm_cc.permissions.index import RuleIndex, kind_of
from dm_cc.permissions.matchers import CompiledRule, Subject
from dm_cc.permissions.patterns import PathContext, arguments_subject, path_subject
from dm_cc.permissions.rules import (
    ENGINE_LANGUAGES,
    Language,
    Request,
    Rule,
    default_rule,
    is_mcp_permission,
)

__all__ = ["CompiledRule", "Ruleset", "Searched", "Subject", "compiled", "evaluate", "last_match",
           "last_match_in", "prepared", "searched", "subject"]


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
            if compiled_rule.permission is None:
                self._exact.setdefault(compiled_rule.rule.permission, []).append(compiled_rule)
            else:
                self._wild.append(compiled_rule)
        self._indexes: dict[tuple[str, Language], RuleIndex] = {}

    def __len__(self) -> int:
        return len(self.rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def candidates(self, permission: str) -> list[CompiledRule]:
        """Every rule whose permission covers ``permission``, in order."""
        exact = self._exact.get(permission, [])
        wild = [c for c in self._wild if c.covers_permission(permission)]
        return sorted(exact + wild, key=lambda c: c.index) if wild else list(exact)

    def index(self, permission: str, language: Language) -> RuleIndex:
        """The rules that can apply to ``permission`` requests read in ``language``,
        indexed (built on first use)."""
        key = (permission, language)
        index = self._indexes.get(key)
        if index is None:
            index = RuleIndex(self.candidates(permission), kind_of(permission, language))
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
# The same list or tuple object passed again: (that object, a copy of its items then,
# its context, its compiled form), by id. Holding the object keeps its id from being
# reused; comparing the items (each by identity first) tells a list changed since.
_RECENT: dict[int, tuple[Sequence[Rule], tuple[Rule, ...] | list[Rule], PathContext,
                         Ruleset]] = {}


def compiled(rules: RulesetLike, context: PathContext | None = None) -> Ruleset:
    """``rules`` compiled under ``context``: a Ruleset is used as it is; a plain list
    is compiled once per content and context and then found again (a bounded cache:
    a list changed since is different content, so it is compiled anew)."""
    if isinstance(rules, Ruleset):
        return rules
    context = context if context is not None else NO_CONTEXT
    recent = _RECENT.get(id(rules))
    if recent is not None and recent[0] is rules and recent[2] == context and (
            type(rules) is tuple or recent[1] == rules):
        return recent[3]
    key = (tuple(rules), context)
    ruleset = _COMPILED.get(key)
    if ruleset is None:
        if len(_COMPILED) >= _COMPILED_MAX:
            del _COMPILED[next(iter(_COMPILED))]
        ruleset = _COMPILED[key] = Ruleset(key[0], key[1])
    if type(rules) in (list, tuple):
        if len(_RECENT) >= _COMPILED_MAX:
            del _RECENT[next(iter(_RECENT))]
        _RECENT[id(rules)] = (rules, key[0] if type(rules) is tuple else list(rules),
                              context, ruleset)
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
    if language == "path" and words is None:
        return _path_name_subject(permission, name, context)
    path = path_subject(name, context) if language == "path" else None
    arguments = arguments_subject(name) if is_mcp_permission(permission) else None
    return Subject(language, name, tuple(words) if words is not None else tuple(name.split()), path,
                   arguments)


@lru_cache(maxsize=64)
def _path_name_subject(permission: str, name: str, context: PathContext) -> Subject:
    """A path request's name prepared (:func:`subject`): prepared for its gate, then
    for each ceiling, with the same context; the last few are kept, a pure function of
    its arguments (no reader changes a subject, as :func:`~.patterns.path_subject`)."""
    arguments = arguments_subject(name) if is_mcp_permission(permission) else None
    return Subject("path", name, tuple(name.split()), path_subject(name, context), arguments)


def last_match(permission: str, name: str, words: Sequence[str] | None,
               rulesets: Sequence[Ruleset], language: Language | None = None
               ) -> tuple[int, int] | None:
    """Where the last matching rule of the concatenated rulesets is: (which ruleset,
    which rule in it); None when no rule matches. A position, not the rule: a plain
    list compiled from the cache holds equal rules, and the caller returns its own."""
    language = language_for(permission, language)
    return last_match_in(permission, name, words, searched(rulesets, permission, language),
                         language)


#: The rulesets that hold a rule for a permission in a language, last first: (position,
#: path context, index) -- most layers hold none for a given permission.
Searched = list[tuple[int, PathContext, RuleIndex]]


def searched(rulesets: Sequence[Ruleset], permission: str, language: Language) -> Searched:
    """Where :func:`last_match_in` looks for a ``permission`` request read in ``language``
    (a caller deciding many requests keeps it: the rulesets never change)."""
    found: Searched = []
    for position in range(len(rulesets) - 1, -1, -1):
        index = rulesets[position].index(permission, language)
        if not index.empty:
            found.append((position, rulesets[position].context, index))
    return found


def last_match_in(permission: str, name: str, words: Sequence[str] | None,
                  where: Searched, language: Language) -> tuple[int, int] | None:
    """:func:`last_match` over the rulesets :func:`searched` found (``language``: as
    :func:`language_for` gives it)."""
    subjects: dict[PathContext, Subject] = {}
    for position, context, index in where:
        prepared = subjects.get(context)
        if prepared is None:
            prepared = subjects[context] = subject(permission, name, words, context, language)
        hit = index.last_match(prepared)
        if hit is not None:
            return position, hit.index
    return None


def prepared(rulesets: Iterable[RulesetLike]) -> tuple[list[Sequence[Rule]], list[Ruleset]]:
    """Each ruleset's rules (the caller's own objects, which a match is reported as)
    and its compiled form."""
    given: list[Sequence[Rule]] = []
    sets: list[Ruleset] = []
    for rules in rulesets:
        if isinstance(rules, Ruleset):
            given.append(rules.rules)
            sets.append(rules)
        else:
            given.append(rules)
            sets.append(compiled(rules))
    return given, sets


def evaluate(permission: str, pattern: str, *rulesets: RulesetLike,
             language: Language | None = None) -> Rule:
    """The last rule of the concatenated rulesets that matches (the very object the
    caller passed); else ``ask`` (:data:`DEFAULT_RULE`, source ``default``; a
    ``redirect`` no rule names: allow, :func:`~.rules.default_rule`).
    ``language``: how ``pattern`` is read -- a tool's permission has its argument's
    (``dm_cc.tools.catalog.language_of``: ``path`` for read and edit, ``shell`` for
    bash); None: the engine's own permissions' language, else a name."""
    given, sets = prepared(rulesets)
    hit = last_match(permission, pattern, None, sets, language)
    return default_rule(permission) if hit is None else given[hit[0]][hit[1]]
