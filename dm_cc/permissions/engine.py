"""Evaluation: last match wins, default ask; decisions over request sets, with a trace.

A :class:`Ruleset` compiles its rules once and indexes them by permission (exact
names, plus wildcard-permission rules kept in order) and, for the wildcard
languages, by the first word a rule can match. Evaluation scans candidates from
the end and stops at the first hit, which is the last match.

Matching is deliberately asymmetric, so that every doubt falls on the safe side:

* ``deny``/``ask`` path rules match case-insensitively; ``allow`` needs exact case.
* ``deny``/``ask`` shell rules also match other spellings of their flags
  (``rm -rf *`` catches ``rm -r -f x``); ``allow`` rules match only as written.
* A request with several names (a symlink and its target) is judged under each;
  the strictest verdict wins.
* An ``allow`` hit on a request that is not allowable (an unresolved shell
  command), or that does not spell out the request's sensitive tokens, becomes
  ``ask``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from dm_cc.permissions.patterns import PathContext, PathGlob, PathSubject, Wildcard, path_subject
from dm_cc.permissions.rules import DEFAULT_RULE, STRICTNESS, Language, Request, Rule, language_of
from dm_cc.permissions.shell.flags import compile_flag_rule


def _first_word_key(pattern: str) -> str | None:
    """The first word every text this pattern matches must have, if the pattern fixes it."""
    cut = min((i for i in (pattern.find("*"), pattern.find("?")) if i >= 0), default=-1)
    literal = pattern if cut < 0 else pattern[:cut]
    if cut >= 0 and " " not in literal:
        return None
    return literal.split(" ", 1)[0]


@dataclass(frozen=True, slots=True)
class _Subject:
    """A request name prepared once for matching against many rules."""

    language: Language
    text: str
    words: tuple[str, ...]
    path: PathSubject | None


class CompiledRule:
    """A rule with its matchers, built on first use for each pattern language."""

    __slots__ = ("rule", "index", "context", "_permission", "__dict__")

    def __init__(self, rule: Rule, index: int, context: PathContext) -> None:
        self.rule = rule
        self.index = index
        self.context = context
        wild = "*" in rule.permission or "?" in rule.permission
        self._permission = Wildcard(rule.permission) if wild else None

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
        return Wildcard(self.rule.pattern)

    @cached_property
    def _flags(self):
        return None if self.strict else compile_flag_rule(self.rule.pattern)

    def matches(self, subject: _Subject) -> bool:
        if subject.language == "path":
            return self._path.match(subject.path)
        if self._text.match(subject.text):
            return True
        if subject.language == "shell":
            flags = self._flags
            return flags is not None and flags.matches(subject.words)
        return False


class _PermissionIndex:
    """The rules that can apply to one permission, split by first word."""

    __slots__ = ("by_first_word", "general")

    def __init__(self, rules: list[CompiledRule], language: Language) -> None:
        self.by_first_word: dict[str, list[CompiledRule]] = {}
        self.general: list[CompiledRule] = []
        for compiled in rules:
            key = _first_word_key(compiled.rule.pattern) if language != "path" else None
            if key is None:
                self.general.append(compiled)
            else:
                self.by_first_word.setdefault(key, []).append(compiled)

    def last_match(self, subject: _Subject) -> CompiledRule | None:
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
    """An ordered, compiled, immutable list of rules."""

    def __init__(self, rules: Iterable[Rule], context: PathContext | None = None) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.context = context if context is not None else default_context()
        self._compiled = [CompiledRule(rule, i, self.context) for i, rule in enumerate(self.rules)]
        self._exact: dict[str, list[CompiledRule]] = {}
        self._wild: list[CompiledRule] = []
        for compiled in self._compiled:
            if compiled._permission is None:
                self._exact.setdefault(compiled.rule.permission, []).append(compiled)
            else:
                self._wild.append(compiled)
        self._indexes: dict[str, _PermissionIndex] = {}

    def __len__(self) -> int:
        return len(self.rules)

    def __iter__(self):
        return iter(self.rules)

    def candidates(self, permission: str) -> list[CompiledRule]:
        """Every rule whose permission covers ``permission``, in order."""
        exact = self._exact.get(permission, [])
        wild = [c for c in self._wild if c.covers_permission(permission)]
        return sorted(exact + wild, key=lambda c: c.index) if wild else list(exact)

    def _index(self, permission: str) -> _PermissionIndex:
        index = self._indexes.get(permission)
        if index is None:
            index = _PermissionIndex(self.candidates(permission), language_of(permission))
            self._indexes[permission] = index
        return index

    def last_match(self, permission: str, subject: _Subject) -> Rule | None:
        hit = self._index(permission).last_match(subject)
        return None if hit is None else hit.rule


def default_context() -> PathContext:
    return PathContext(root=None, home=os.path.expanduser("~"))


RulesetLike = Ruleset | Sequence[Rule]


def _as_ruleset(rules: RulesetLike) -> Ruleset:
    return rules if isinstance(rules, Ruleset) else Ruleset(rules)


def _subject(permission: str, name: str, words: Sequence[str] | None, context) -> _Subject:
    language = language_of(permission)
    path = path_subject(name, context) if language == "path" else None
    return _Subject(language, name, tuple(words) if words is not None else tuple(name.split()), path)


def _last_match(permission: str, name: str, words, rulesets: Sequence[Ruleset]) -> Rule:
    subjects: dict[int, _Subject] = {}
    for ruleset in reversed(rulesets):
        key = id(ruleset.context)
        subject = subjects.get(key)
        if subject is None:
            subject = subjects[key] = _subject(permission, name, words, ruleset.context)
        hit = ruleset.last_match(permission, subject)
        if hit is not None:
            return hit
    return DEFAULT_RULE


def evaluate(permission: str, pattern: str, *rulesets: RulesetLike) -> Rule:
    """The last rule of the concatenated rulesets that matches; else ``ask`` (``default``)."""
    return _last_match(permission, pattern, None, [_as_ruleset(r) for r in rulesets])


# --------------------------------------------------------------------------- decisions


@dataclass(frozen=True, slots=True)
class Verdict:
    """How one request was decided: the deciding rule and the resulting action.

    ``action`` differs from ``rule.action`` only when an allow was withheld
    (``note`` says why); ``name`` is the name of the request that decided it.
    """

    request: Request
    rule: Rule
    action: str
    name: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """A request set's outcome: any deny → deny; else any ask → ask; else allow."""

    action: str
    verdicts: tuple[Verdict, ...]

    @property
    def deciding(self) -> tuple[Verdict, ...]:
        """The verdicts that made the decision what it is (the strictest ones)."""
        return tuple(v for v in self.verdicts if v.action == self.action)


_NAME_ENDS = frozenset(" =*/:")


def _names(pattern: str, token: str) -> bool:
    """Does ``pattern`` spell ``token`` out as a word of its own (``-exec`` in
    ``find * -exec *``, ``--output`` in ``--output=*``, not ``--pre`` in ``--pretty``)?"""
    start = pattern.find(token)
    while start >= 0:
        end = start + len(token)
        if (start == 0 or pattern[start - 1] == " ") and \
                (end == len(pattern) or pattern[end] in _NAME_ENDS or token[-1] in "/= "):
            return True
        start = pattern.find(token, start + 1)
    return False


def _withheld(request: Request, rule: Rule) -> str | None:
    if not request.allowable:
        return request.note or "this cannot be judged statically, so no rule may allow it"
    missing = [token for token in request.sensitive if not _names(rule.pattern, token)]
    if missing:
        return (f"{', '.join(missing)} can run, write or reveal more than the rule says: "
                "only an allow rule that names it explicitly can allow this")
    return None


def judge(request: Request, rulesets: Sequence[Ruleset]) -> Verdict:
    """Decide one request under each of its names; the strictest verdict wins."""
    worst: Verdict | None = None
    for name in request.names:
        rule = _last_match(request.permission, name, request.words, rulesets)
        action, note = rule.action, None
        if request.speculative and action != "deny":
            action, note = "allow", "a guessed inner command: only a deny rule decides it"
        elif action == "allow":
            note = _withheld(request, rule)
            if note is not None:
                action = "ask"
        verdict = Verdict(request, rule, action, name, note)
        if worst is None or STRICTNESS[action] > STRICTNESS[worst.action]:
            worst = verdict
    assert worst is not None
    return worst


def combine(verdicts: Iterable[Verdict]) -> Decision:
    """Any deny → deny; else any ask → ask; else allow. No verdicts → ask (nothing
    vouches for the call)."""
    verdicts = tuple(verdicts)
    if not verdicts:
        return Decision("ask", ())
    action = max((v.action for v in verdicts), key=STRICTNESS.__getitem__)
    return Decision(action, verdicts)


def decide(requests: Iterable[Request], *rulesets: RulesetLike) -> Decision:
    """Judge every request and combine the verdicts."""
    compiled = [_as_ruleset(r) for r in rulesets]
    return combine(judge(request, compiled) for request in requests)


def stricter(first: str, second: str) -> str:
    """The stricter of two actions (deny > ask > allow)."""
    return first if STRICTNESS[first] >= STRICTNESS[second] else second


def considered(request: Request, rulesets: Sequence[RulesetLike]) -> list[tuple[Rule, tuple[str, ...]]]:
    """Every rule that could apply to the request's permission, in order, with the
    request names it matches (for ``dm_cc policy explain``)."""
    out: list[tuple[Rule, tuple[str, ...]]] = []
    for ruleset in (_as_ruleset(r) for r in rulesets):
        subjects = [
            (name, _subject(request.permission, name, request.words, ruleset.context))
            for name in request.names
        ]
        for compiled in ruleset.candidates(request.permission):
            hits = tuple(name for name, subject in subjects if compiled.matches(subject))
            out.append((compiled.rule, hits))
    return out
