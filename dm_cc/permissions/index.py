"""Finding the last rule that matches a request, without trying every rule.

A rule matches a request when its own matcher says so (:mod:`.matchers`); the last
match wins. Trying the rules from the end costs one matcher call per rule that
does not match, so a policy or approval store of 10,000 rules for one permission
cost milliseconds per decision. A :class:`RuleIndex` holds the rules for one
permission read in one language, keyed by what every text a rule matches must
start with:

* a command or a name by its leading literal words (``npm run test *`` under
  ``npm`` → ``run`` → ``test``), a path pattern by its leading literal segments
  (``src/**`` under ``src``; ``.env`` as a last segment), an MCP call by the
  exact call it names. Walking a request's own words down these keys finds the
  only rules that can match it.
* Most patterns are decided by the walk alone (:class:`~.patterns.Shape`):
  ``git push *`` matches exactly the commands that reach ``git`` → ``push``; the
  rest are tried with their own matcher, only where the walk reaches them.
* A deny or ask shell rule also matches other spellings of its flags: it is
  keyed by its program and the last of its leading words
  (:func:`~.shell.flags.flag_keys`), and tried with its flag matcher.

Each place keeps the highest rule index it holds (and its subtree's), so the
search stops as soon as nothing there can beat the match found so far. Where the
walk cannot stand for the matcher exactly, the rule is tried with its matcher,
and where a request cannot be walked faithfully (a URL that is not ASCII, for the
case-insensitive rules) every rule is tried from the end: the answer is always
the one trying every rule gives (``tests/permissions/test_index_properties.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from dm_cc.permissions.matchers import (
    CompiledRule,
    EscapedFlagRule,
    Subject,
    escape_word,
    escape_words,
)
from dm_cc.permissions.patterns import PathSubject, Shape, wildcard_shapes
from dm_cc.permissions.rules import Language, is_mcp_permission
from dm_cc.permissions.shell.flags import FlagRule, flag_keys, has_options

NOTHING = -1  # no rule (rule indexes start at 0)

#: How the requests of one permission in one language are matched (:meth:`CompiledRule.matches`).
Kind = Literal["path", "arguments", "shell", "url", "name"]
Test = Callable[[Any], bool]


def kind_of(permission: str, language: Language) -> Kind:
    """How a request of ``permission`` read in ``language`` is matched: as
    :meth:`CompiledRule.matches` chooses for its :class:`Subject`."""
    if language == "path":
        return "path"
    if is_mcp_permission(permission):
        return "arguments"
    return language


#: How many times the rules at one place are tried one by one before those with a
#: regular expression are compiled into one: a one-shot ``dm_cc policy check`` would
#: spend more compiling than matching.
TRIED_BEFORE_COMPILING = 2


class _Tried:
    """Rules at one place that only their own matcher decides, tried last first. Those
    whose matcher is a regular expression are tried as one once the place is used
    (:data:`TRIED_BEFORE_COMPILING`), when there are several: its alternatives are
    ordered last rule first, and the first that matches is the one a regular
    expression reports."""

    __slots__ = ("top", "_tests", "_sources", "_regex", "_indexes", "_tried")

    def __init__(self) -> None:
        self._tried = 0
        self.top = NOTHING
        self._tests: list[tuple[int, Test]] = []
        self._sources: list[tuple[int, Callable[[], str], Test]] = []
        self._regex: re.Pattern[str] | None = None
        self._indexes: list[int] = []

    def add(self, index: int, test: Test, source: Callable[[], str] | None = None) -> None:
        """A rule matching where ``test`` passes (``source``: makes a regular expression
        matching exactly there, as :func:`re.match` with ``re.DOTALL`` reads it; made
        only when the rules here are first tried together)."""
        self.top = max(self.top, index)
        if source is None:
            self._tests.append((index, test))
        else:
            self._sources.append((index, source, test))

    def finish(self) -> None:
        if len(self._sources) == 1:  # one alone: its own matcher, nothing to compile
            index, _source, test = self._sources.pop()
            self._tests.append((index, test))
        self._tests.sort(key=lambda tried: tried[0], reverse=True)
        self._sources.sort(key=lambda tried: tried[0], reverse=True)

    def last(self, value: Any, best: int) -> int:
        """The highest index above ``best`` of a rule here matching ``value``; else ``best``."""
        if self.top <= best:
            return best
        if self._sources and self._sources[0][0] > best:
            if self._regex is None and self._tried < TRIED_BEFORE_COMPILING:
                self._tried += 1
                best = max(best, _first_of(self._sources, value, best))
            else:
                best = max(best, self._first(value))
        for index, test in self._tests:
            if index <= best:
                break
            if test(value):
                return index
        return best

    def _first(self, text: str) -> int:
        if self._regex is None:
            self._indexes = [NOTHING, *(index for index, _source, _test in self._sources)]
            self._regex = re.compile("|".join(f"(?:{source()})()" for _index, source, _test
                                              in self._sources), re.DOTALL)
        found = self._regex.match(text)
        return NOTHING if found is None else self._indexes[found.lastindex or 0]


def _first_of(sources: Sequence[tuple[int, Callable[[], str], Test]], value: Any,
              best: int) -> int:
    """The highest index above ``best`` among ``sources`` (last first) whose test passes."""
    for index, _source, test in sources:
        if index <= best:
            break
        if test(value):
            return index
    return best


class _Node:
    __slots__ = ("children", "exact", "deeper", "reach", "others", "here", "below")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.exact = self.deeper = self.reach = self.here = self.below = NOTHING
        self.others = _Tried()


class _Trie:
    """Rules keyed by the words (or segments) every text they match starts with."""

    __slots__ = ("root", "size")

    def __init__(self) -> None:
        self.root = _Node()
        self.size = 0

    def add(self, shape: Shape, index: int, test: Test | None = None,
            source: Callable[[], str] | None = None) -> None:
        """A rule's alternative of ``shape``; an ``other`` one with its ``test`` (and
        ``source``: see :meth:`_Tried.add`)."""
        node = self.root
        for key in shape.keys:
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = _Node()
            node = child
        self.size += 1
        if shape.kind == "other":
            assert test is not None
            node.others.add(index, test, source)
        elif shape.kind == "exact":
            node.exact = max(node.exact, index)
        elif shape.kind == "deeper":
            node.deeper = max(node.deeper, index)
        else:
            node.reach = max(node.reach, index)

    def finish(self) -> None:
        """Note the highest index each place, and each subtree, holds."""
        stack: list[tuple[_Node, bool]] = [(self.root, False)]
        while stack:  # iterative: keys may be thousands deep
            node, done = stack.pop()
            if not done:
                stack.append((node, True))
                stack.extend((child, False) for child in node.children.values())
                continue
            node.others.finish()
            node.here = max(node.exact, node.deeper, node.reach, node.others.top)
            node.below = max([node.here, *(child.below for child in node.children.values())])

    def last(self, keys: Sequence[str] | _Casefolded, value: object, best: int) -> int:
        """The highest index above ``best`` of a rule here matching ``keys`` (the
        words of ``value``, what an ``other`` rule's matcher is given); else ``best``."""
        node: _Node | None = self.root
        depth, count = 0, len(keys)
        while node is not None and node.below > best:
            if node.here > best:
                if node.reach > best:
                    best = node.reach
                if depth == count:
                    if node.exact > best:
                        best = node.exact
                elif node.deeper > best:
                    best = node.deeper
                best = node.others.last(value, best)
            if depth == count:
                break
            node = node.children.get(keys[depth])
            depth += 1
        return best


class RuleIndex:
    """The rules that can apply to one permission's requests in one language, keyed
    so that :meth:`last_match` finds the last one matching a request quickly."""

    def __init__(self, rules: Sequence[CompiledRule], kind: Kind) -> None:
        self.kind = kind
        self.rules = list(rules)
        self.empty = not self.rules
        self._by_index = {compiled.index: compiled for compiled in self.rules}
        self._always = NOTHING
        build = {"path": self._paths, "arguments": self._arguments}.get(kind, self._texts)
        build()

    def last_match(self, subject: Subject) -> CompiledRule | None:
        """The last rule matching ``subject``, if any: the one trying every rule from
        the end would find (:meth:`scan`)."""
        if self.empty:
            return None
        best = self._find(subject)
        return None if best == NOTHING else self._by_index[best]

    def scan(self, subject: Subject) -> CompiledRule | None:
        """The last rule matching ``subject``, trying every rule from the end."""
        for compiled in reversed(self.rules):
            if compiled.matches(subject):
                return compiled
        return None

    def _find(self, subject: Subject) -> int:
        if self.kind == "path":
            return self._find_path(subject)
        if self.kind == "arguments":
            return self._find_arguments(subject)
        if subject.language != self.kind or subject.path is not None \
                or subject.arguments is not None:
            return self._fallback(subject)  # not a subject of this index's kind
        return self._find_text(subject)

    def _fallback(self, subject: Subject) -> int:
        found = self.scan(subject)
        return NOTHING if found is None else found.index

    # ------------------------------------------------------------------ commands, names, URLs

    def _texts(self) -> None:
        # A command's or a name's keys are its words; a URL's (or a host's) the parts
        # between its slashes (``https:``, ``""``, ``example.com``, ...).
        self._sep = "/" if self.kind == "url" else " "
        self._text = _Trie()    # matched as written
        self._folded = _Trie()  # ignoring case (deny and ask URL rules): keys lowercased
        self._flags: dict[tuple[str, str | None], _Tried] = {}
        # ... those that can match a command with no option word (FlagRule.needs_options)
        self._bare_flags: dict[tuple[str, str | None], _Tried] = {}
        # rules with escaped wildcards: keyed alike, by the command's words with their
        # `*` and `?` as the stand-ins the rule's literal ones are (EscapedFlagRule)
        self._escaped_flags: dict[tuple[str, str | None], _Tried] = {}
        self._bare_escaped_flags: dict[tuple[str, str | None], _Tried] = {}
        for compiled in self.rules:
            self._add_text(compiled)
        self._text.finish()
        self._folded.finish()
        for tried in (*self._flags.values(), *self._bare_flags.values(),
                      *self._escaped_flags.values(), *self._bare_escaped_flags.values()):
            tried.finish()
        self._flag_tops = _tops(self._flags)
        self._bare_tops = _tops(self._bare_flags)
        self._escaped_tops = _tops(self._escaped_flags)
        self._bare_escaped_tops = _tops(self._bare_escaped_flags)

    def _add_text(self, compiled: CompiledRule) -> None:
        index, pattern = compiled.index, compiled.rule.pattern
        if self.kind == "url" and not compiled.strict:
            # Ignoring case matches all the case-sensitive pattern does, and more.
            for shape in wildcard_shapes(pattern, sep=self._sep):
                shape = _ascii_lower(shape)
                if shape.kind == "other":  # only these need a matcher (built when used)
                    self._folded.add(shape, index, *_folded_matcher(compiled))
                else:
                    self._folded.add(shape, index)
            return
        shell = self.kind == "shell"
        for shape in wildcard_shapes(pattern, escapes=shell, sep=self._sep):
            if shape == Shape("reach", ()):
                self._always = max(self._always, index)
            elif shape.kind == "other":  # only these need a matcher (built when used)
                self._text.add(shape, index, *_text_matcher(compiled, shell))
            else:
                self._text.add(shape, index)
        if shell:
            flags = compiled.flags
            if isinstance(flags, EscapedFlagRule):
                flags, every, bare = flags.flags, self._escaped_flags, self._bare_escaped_flags
            elif isinstance(flags, FlagRule):
                every, bare = self._flags, self._bare_flags
            else:
                return
            every.setdefault(flags.key, _Tried()).add(index, flags.matches)
            if not flags.needs_options:
                bare.setdefault(flags.key, _Tried()).add(index, flags.matches)

    def _find_text(self, subject: Subject) -> int:
        text = subject.text
        folded = self._folded.size > 0
        if folded and not text.isascii():
            return self._fallback(subject)  # the folded keys are ASCII lowercase
        sep = self._sep
        best = self._text.last(text.split(sep), text, self._always)
        if folded:
            best = self._folded.last(text.lower().split(sep), text, best)
        words = subject.words
        # Respelling a command keeps its program (npm i is npm install), so its first
        # word says whether a flag rule could beat the match found so far.
        if not words:
            return best
        if self._flag_tops.get(words[0], NOTHING) > best:
            best = _flags_match(self._flags, self._bare_flags, self._bare_tops, words, best)
        if self._escaped_tops and \
                self._escaped_tops.get(escape_word(words[0]), NOTHING) > best:
            best = _flags_match(self._escaped_flags, self._bare_escaped_flags,
                                self._bare_escaped_tops, escape_words(words), best)
        return best

    # ------------------------------------------------------------------ paths

    def _paths(self) -> None:
        self._names: dict[str, int] = {}         # a last segment, as written
        self._folded_names: dict[str, int] = {}  # ... casefolded
        self._anywhere = _Tried()                # a last segment, by its glob
        self._relative, self._folded_relative = _Trie(), _Trie()
        self._absolute, self._folded_absolute = _Trie(), _Trie()
        for compiled in self.rules:
            self._add_path(compiled)
        for trie in (self._relative, self._folded_relative, self._absolute,
                     self._folded_absolute):
            trie.finish()
        self._anywhere.finish()

    def _add_path(self, compiled: CompiledRule) -> None:
        index, glob, strict = compiled.index, compiled.path, compiled.strict
        for area, shape, segment in glob.shapes():
            if area == "any":
                self._always = max(self._always, index)
            elif segment is not None and shape.kind == "exact":
                names = self._names if strict else self._folded_names
                names[shape.keys[0]] = max(names.get(shape.keys[0], NOTHING), index)
            elif segment is not None:
                source = segment.regex_source()
                self._anywhere.add(index, segment.match,
                                   None if source is None else _constant(source))
            elif area == "relative":
                (self._relative if strict else self._folded_relative).add(shape, index, glob.match)
            else:
                (self._absolute if strict else self._folded_absolute).add(shape, index, glob.match)

    def _find_path(self, subject: Subject) -> int:
        path = subject.path
        if path is None:
            return self._fallback(subject)
        best = self._always
        relative, absolute = path.relative, path.absolute
        here = absolute if relative is None else relative
        if here:
            name = here[-1]
            best = max(best, self._names.get(name, NOTHING))
            if self._folded_names:
                best = max(best, self._folded_names.get(name.casefold(), NOTHING))
            best = self._anywhere.last(name, best)
        if relative is not None:
            best = _walk(self._relative, self._folded_relative, relative, path, best)
        if absolute is not None:
            best = _walk(self._absolute, self._folded_absolute, absolute, path, best)
        return best

    # ------------------------------------------------------------------ MCP calls

    def _arguments(self) -> None:
        self._calls: dict[str, int] = {}  # the canonical JSON of the one call a rule names
        self._conditions = _Tried()
        for compiled in self.rules:
            pattern = compiled.arguments
            if pattern.everything:
                self._always = max(self._always, compiled.index)
            elif pattern.exact is not None:
                self._calls[pattern.exact] = max(self._calls.get(pattern.exact, NOTHING),
                                                 compiled.index)
            else:
                self._conditions.add(compiled.index, pattern.match)
        self._conditions.finish()

    def _find_arguments(self, subject: Subject) -> int:
        arguments = subject.arguments
        if arguments is None:
            return self._fallback(subject)
        best = self._always
        if arguments.value is not None:
            best = max(best, self._calls.get(arguments.text, NOTHING))
        return self._conditions.last(arguments, best)


def _tops(flags: dict[tuple[str, str | None], _Tried]) -> dict[str, int]:
    """Per program, the highest index of its flag rules."""
    tops: dict[str, int] = {}
    for (program, _word), tried in flags.items():
        tops[program] = max(tops.get(program, NOTHING), tried.top)
    return tops


def _flags_match(every: dict[tuple[str, str | None], _Tried],
                 bare: dict[tuple[str, str | None], _Tried], bare_tops: dict[str, int],
                 words: tuple[str, ...], best: int) -> int:
    """The best flag rule that may match ``words``: of ``every`` rule when the command has
    an option word; else only of those that can match one without (``bare``), and only
    when one of them could beat ``best`` (``rm x1`` meets only rules needing an option)."""
    if has_options(words):
        return _flag_match(every, words, best)
    if bare_tops.get(words[0], NOTHING) > best:
        return _flag_match(bare, words, best)
    return best


def _flag_match(flags: dict[tuple[str, str | None], _Tried], words: tuple[str, ...],
                best: int) -> int:
    """The best flag rule among those keyed as ``words`` may match (:func:`flag_keys`)."""
    for key in flag_keys(words):
        tried = flags.get(key)
        if tried is not None:
            best = tried.last(words, best)
    return best


def _walk(trie: _Trie, folded: _Trie, segments: Sequence[str], path: PathSubject, best: int) -> int:
    """The best rule of a path area: as written, then casefolded (deny and ask rules)."""
    best = trie.last(segments, path, best)
    if folded.root.below > best:
        best = folded.last(_Casefolded(segments), path, best)
    return best


class _Casefolded:
    """A path's segments casefolded as the walk reaches them: most walks stop at the
    first segment, and after ``cd a; cd a; …`` a path holds thousands."""

    __slots__ = ("_segments",)

    def __init__(self, segments: Sequence[str]) -> None:
        self._segments = segments

    def __len__(self) -> int:
        return len(self._segments)

    def __getitem__(self, depth: int) -> str:
        return self._segments[depth].casefold()


def _text_matcher(compiled: CompiledRule, shell: bool) -> tuple[Test, Callable[[], str]]:
    """A rule's text matcher and its regex, each built on first use."""
    if shell:
        return (lambda text: compiled.shell_text.match(text)), lambda: compiled.shell_text.regex()
    return (lambda text: compiled.text.match(text)), lambda: compiled.text.regex()


def _folded_matcher(compiled: CompiledRule) -> tuple[Test, Callable[[], str]]:
    """A rule's matcher ignoring case and its regex, each built on first use."""
    return (lambda text: compiled.folded.match(text)), lambda: compiled.folded.regex()


def _constant(source: str) -> Callable[[], str]:
    return lambda: source


def _ascii_lower(shape: Shape) -> Shape:
    """``shape`` for a case-insensitive pattern, keyed by lowercase words for requests
    that are ASCII: kept up to its first word that is not ASCII (a letter there may
    equal an ASCII one ignoring case: the Kelvin sign is a ``k``), as ``other``."""
    keys: list[str] = []
    for key in shape.keys:
        if not key.isascii():
            return Shape("other", tuple(keys))
        keys.append(key.lower())
    return Shape(shape.kind, tuple(keys))
