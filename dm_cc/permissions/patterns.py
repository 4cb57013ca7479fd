"""The three pattern languages of rules, compiled once and matched in linear time.

* **Wildcard** (bash commands, subagent names, URLs): ``*`` is
  any run of characters (spaces and ``/`` included), ``?`` is one character,
  everything else is literal (``( | [ ] $ ^ + .`` too), and a trailing ``" *"`` is
  optional: ``git *`` matches ``git`` and ``git status`` but not ``gitk``. In
  shell-command patterns (``escapes=True``) a backslash makes the next ``*``,
  ``?`` or ``\\`` literal (``rm -rf /\\*`` is exactly the command ``rm -rf /*``);
  any other backslash is itself. Elsewhere (URLs, JSON) a backslash is plain text.
* **Path globs** (read, edit, list, glob, grep, external_directory): wcmatch
  segment globs where ``*``/``?``/``[..]`` stay inside one segment, ``**`` spans
  segments, ``{a,b}`` braces, dotfiles matched; gitignore anchoring (no ``/`` →
  basename at any depth; a ``/`` → project-relative; ``/…`` absolute; ``~/…``
  home).
* **MCP arguments**: conditions over top-level keys (``repo=myorg/* branch=docs/*``),
  each value a wildcard over the JSON scalar's text (:class:`ArgumentsPattern`).

Neither language is turned into one big backtracking regex. A pattern is split at
its stars (or at its ``**`` segments); the pieces between are found left to
right, which is the correct and linear way to match a star-only glob: the
leftmost place a piece fits always leaves the most room for the pieces after it.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal, NamedTuple

MAX_BRACE_EXPANSION = 256
#: Path patterns that match every path in the project: a rule with one names
#: nothing in particular (the sandbox and a command's effects read it so).
UNIVERSAL_PATHS = frozenset({"*", "**", "**/*", "./**"})

# --------------------------------------------------------------------------- wildcard


ESCAPABLE = "*?\\"


def split_wildcard(pattern: str) -> list[list[str | None]]:
    """A pattern's star-free pieces, each a list of characters (None: an unescaped
    ``?``), split at unescaped ``*``; ``\\*``, ``\\?`` and ``\\\\`` are literal."""
    pieces: list[list[str | None]] = [[]]
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n and pattern[i + 1] in ESCAPABLE:
            pieces[-1].append(pattern[i + 1])
            i += 2
            continue
        if ch == "*":
            pieces.append([])
        else:
            pieces[-1].append(None if ch == "?" else ch)
        i += 1
    return pieces


def unescaped_prefix(pattern: str) -> str:
    """The literal text every match of ``pattern`` starts with (escapes resolved)."""
    out = []
    for ch in split_wildcard(pattern)[0]:
        if ch is None:
            break
        out.append(ch)
    return "".join(out)


class _Piece:
    """A star-free run of a wildcard pattern; ``?`` matches any single character."""

    __slots__ = ("length", "text", "regex", "literal", "source")

    def __init__(self, chars: list[str | None], ignore_case: bool) -> None:
        self.length = len(chars)
        self.text = "".join(ch or "?" for ch in chars)
        self.literal = None not in chars  # no `?`: ``text`` is what it matches
        self.regex: re.Pattern[str] | None = None  # None: plain text, compared as it is
        self.source: str | None = None  # the regex's source (a literal's: text escaped)
        if None in chars or ignore_case:
            self.source = "".join("." if ch is None else re.escape(ch) for ch in chars)
            self.regex = re.compile(self.source,
                                    re.DOTALL | (re.IGNORECASE if ignore_case else 0))

    def match_at(self, text: str, pos: int) -> bool:
        if self.regex is None:
            return text.startswith(self.text, pos)
        return self.regex.match(text, pos, pos + self.length) is not None

    def find(self, text: str, start: int, end: int) -> int:
        if self.regex is None:
            return text.find(self.text, start, end)
        found = self.regex.search(text, start, end)
        return -1 if found is None else found.start()


class Wildcard:
    """A compiled wildcard; ``match(text)`` is linear in ``len(text)`` per piece."""

    __slots__ = ("pattern", "_pieces", "_min_length", "_optional_tail", "_ignore_case")

    def __init__(self, pattern: str, *, ignore_case: bool = False,
                 optional_tail: bool = True, escapes: bool = True) -> None:
        self.pattern = pattern
        self._ignore_case = ignore_case
        self._optional_tail: Wildcard | None = None
        if optional_tail and pattern.endswith(" *"):
            self._optional_tail = Wildcard(pattern[:-2], ignore_case=ignore_case,
                                           escapes=escapes)
        if escapes and "\\" in pattern:
            parts = split_wildcard(pattern)
        else:
            parts = [[None if ch == "?" else ch for ch in part] for part in pattern.split("*")]
        self._pieces = [_Piece(part, ignore_case) for part in parts]
        self._min_length = sum(piece.length for piece in self._pieces)

    def match(self, text: str) -> bool:
        if self._match(text):
            return True
        return self._optional_tail is not None and self._optional_tail.match(text)

    def regex(self) -> str:
        """A regular expression (for ``re.match`` with ``re.DOTALL``) that matches
        exactly the texts this wildcard matches, in linear time like :meth:`match`:
        each middle piece is found leftmost and kept (an atomic group), which is
        the same search, so it never backtracks over the text more than once."""
        sources = []
        wildcard: Wildcard | None = self
        while wildcard is not None:
            sources.append(wildcard._regex())
            wildcard = wildcard._optional_tail
        return sources[0] if len(sources) == 1 else "|".join(f"(?:{s})" for s in sources)

    def _regex(self) -> str:
        pieces = [piece.source if piece.source is not None else re.escape(piece.text)
                  for piece in self._pieces]
        if len(pieces) == 1:
            body = pieces[0] + r"\Z"
        else:
            middle = "".join(f"(?>.*?{piece})" for piece in pieces[1:-1] if piece)
            body = f"{pieces[0]}{middle}.*{pieces[-1]}\\Z"
        return f"(?i:{body})" if self._ignore_case else body

    def _match(self, text: str) -> bool:
        pieces = self._pieces
        if len(text) < self._min_length:
            return False
        if len(pieces) == 1:
            return len(text) == pieces[0].length and pieces[0].match_at(text, 0)
        first, last = pieces[0], pieces[-1]
        end = len(text) - last.length
        if not first.match_at(text, 0) or not last.match_at(text, end):
            return False
        pos = first.length
        for piece in pieces[1:-1]:
            if piece.length == 0:
                continue
            found = piece.find(text, pos, end)
            if found < 0:
                return False
            pos = found + piece.length
        return pos <= end


class Shape(NamedTuple):
    """What one alternative of a pattern asks of the keys of a text: its words split at
    each space (or a path's segments), compared as they are (case-sensitive) or
    folded for a pattern that ignores case:

    * ``exact``: the keys are ``keys`` (the pattern names one text or path);
    * ``deeper``: the keys start with ``keys`` and go on (``git push *`` without its
      optional tail: ``git push`` and one more word at least; ``https://a.com/*``);
    * ``reach``: the keys start with ``keys`` (``src/**``; ``*`` with no keys);
    * ``other``: the keys start with ``keys``, and the pattern's matcher decides.

    Each but ``other`` is the whole truth about the alternative, so an index can
    decide it by finding the keys (:mod:`dm_cc.permissions.index`).
    """

    kind: Literal["exact", "deeper", "reach", "other"]
    keys: tuple[str, ...]


def wildcard_shapes(pattern: str, *, escapes: bool = False, sep: str = " ") -> list[Shape]:
    """What each alternative of the wildcard ``pattern`` (itself, then each optional
    tail dropped: ``Wildcard(pattern, escapes=escapes)``) asks of a text's keys, the
    text split at ``sep`` (words; a URL's parts between slashes). Read from the
    pattern's text: no matcher is built (most never need one)."""
    shapes = [_wildcard_shape(pattern, escapes, sep)]
    while pattern.endswith(" *"):
        pattern = pattern[:-2]
        shapes.append(_wildcard_shape(pattern, escapes, sep))
    return shapes


def _wildcard_shape(pattern: str, escapes: bool, sep: str) -> Shape:
    if escapes and "\\" in pattern:
        # An escaped `*`, `?` or backslash is literal: read the pieces as Wildcard does;
        # an unescaped `?` (None) shows as "?".
        pieces = split_wildcard(pattern)
        parts = ["".join(ch if ch is not None else "?" for ch in piece) for piece in pieces]
        literal = None not in pieces[0]
    else:
        parts = pattern.split("*")
        literal = "?" not in parts[0]
    first = parts[0]
    if literal and len(parts) == 1:
        return Shape("exact", tuple(first.split(sep)))
    if literal and len(parts) == 2 and not parts[1]:
        if not first:
            return Shape("reach", ())
        if first.endswith(sep):
            return Shape("deeper", tuple(first[:-len(sep)].split(sep)))
    # Cut at the first `?` (an escaped one too: a shorter prefix is still one every
    # match starts with).
    prefix = first if literal else first[:first.index("?")]
    return Shape("other", tuple(prefix.split(sep)[:-1]))


def is_literal(pattern: str) -> bool:
    """True when a wildcard pattern contains no (unescaped) wildcard characters."""
    return len(split_wildcard(pattern)) == 1 and None not in split_wildcard(pattern)[0]


# --------------------------------------------------------------------------- paths

@lru_cache(maxsize=4096)
def _segment_regex(segment: str, ignore_case: bool) -> re.Pattern[str]:
    from wcmatch import fnmatch as wc_fnmatch  # lazily: a shell-only decision never needs it

    flags = wc_fnmatch.DOTMATCH | (wc_fnmatch.IGNORECASE if ignore_case else wc_fnmatch.CASE)
    include, _exclude = wc_fnmatch.translate(segment, flags=flags)
    return re.compile(include[0])


def _is_magic(segment: str) -> bool:
    return any(ch in segment for ch in "*?[")


class SegmentGlob:
    """One path segment: a literal compare; ``*``/``?`` with the linear wildcard
    matcher (a segment holds no ``/``, so the semantics are glob's); character
    classes ``[..]`` through a wcmatch regex (atomic, linear)."""

    __slots__ = ("text", "regex", "wild", "ignore_case")

    def __init__(self, text: str, ignore_case: bool) -> None:
        self.text = text.casefold() if ignore_case else text
        self.ignore_case = ignore_case
        self.regex = _segment_regex(text, ignore_case) if "[" in text else None
        self.wild = Wildcard(text, ignore_case=ignore_case, optional_tail=False,
                             escapes=False) \
            if self.regex is None and _is_magic(text) else None

    @property
    def literal(self) -> bool:
        """Matched by comparing ``text`` (a segment casefolded first when ignoring case)."""
        return self.regex is None and self.wild is None

    def regex_source(self) -> str | None:
        """A regular expression matching exactly the segments this glob matches
        (:meth:`Wildcard.regex`); None for a literal or a character class."""
        return None if self.wild is None else self.wild.regex()

    def match(self, segment: str) -> bool:
        if self.regex is not None:
            return self.regex.match(segment) is not None
        if self.wild is not None:
            return self.wild.match(segment)
        if self.ignore_case:
            return segment.casefold() == self.text
        return segment == self.text


def _group_match_at(group: list[SegmentGlob], segments: Sequence[str], pos: int) -> bool:
    return all(glob.match(segments[pos + i]) for i, glob in enumerate(group))


class _SegmentPattern:
    """A brace-free path glob as segment groups separated by ``**``."""

    __slots__ = ("groups", "minimum")

    def __init__(self, segments: list[str], ignore_case: bool) -> None:
        groups: list[list[SegmentGlob]] = [[]]
        for segment in segments:
            if segment == "**":
                groups.append([])
            else:
                groups[-1].append(SegmentGlob(segment, ignore_case))
        self.groups = groups
        self.minimum = sum(len(group) for group in groups)

    def match(self, segments: Sequence[str]) -> bool:
        groups = self.groups
        if len(segments) < self.minimum:
            return False
        if len(groups) == 1:
            return len(segments) == len(groups[0]) and _group_match_at(groups[0], segments, 0)
        if len(groups) == 2 and not groups[0] and len(groups[1]) == 1:
            return groups[1][0].match(segments[-1])  # `**/NAME` (a name at any depth)
        first, last = groups[0], groups[-1]
        end = len(segments) - len(last)
        if not _group_match_at(first, segments, 0) or not _group_match_at(last, segments, end):
            return False
        pos = len(first)
        for group in groups[1:-1]:
            if not group:
                continue
            while pos + len(group) <= end and not _group_match_at(group, segments, pos):
                pos += 1
            if pos + len(group) > end:
                return False
            pos += len(group)
        return pos <= end

    def shape(self) -> Shape:
        """What this pattern asks of a path's segments (:class:`Shape`; a literal
        segment's key is casefolded when ignoring case)."""
        groups = self.groups
        lead: list[str] = []
        for glob in groups[0]:
            if not glob.literal:
                break
            lead.append(glob.text)
        whole = len(lead) == len(groups[0])
        if whole and len(groups) == 1:
            return Shape("exact", tuple(lead))
        if whole and len(groups) == 2 and not groups[1]:
            return Shape("reach", tuple(lead))
        return Shape("other", tuple(lead))


class PathContext(NamedTuple):
    """Where relative and home-relative patterns are anchored.

    ``root`` is the project root (absolute, POSIX); ``home`` the home directory.
    Either may be None: a pattern needing it then matches only requests already in
    its own form.
    """

    root: str | None = None
    home: str | None = None


def _split_abs(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def _split_rel(path: str) -> list[str]:
    return [] if path in ("", ".") else [part for part in path.split("/") if part]


#: Which of a request path's forms a path pattern's alternative is matched against:
#: ``anywhere`` (no ``/``: the last segment of the project-relative form, else of the
#: absolute one), ``relative``, ``absolute``, or ``any`` (``*``: every path).
PathArea = Literal["any", "anywhere", "relative", "absolute"]


class PathGlob:
    """A compiled path pattern; ``match(request_path)`` for canonical request paths.

    Request paths are project-relative POSIX (``src/a.py``, ``.`` for the root)
    when inside the project, absolute (``/etc/passwd``) outside.
    """

    __slots__ = ("pattern", "_anywhere", "_relative", "_absolute", "_everything")

    def __init__(self, pattern: str, context: PathContext, *, ignore_case: bool = False) -> None:
        self.pattern = pattern
        self._everything = pattern == "*"
        self._anywhere: list[_SegmentPattern] = []
        self._relative: list[_SegmentPattern] = []
        self._absolute: list[_SegmentPattern] = []
        alternatives = [pattern]
        if "{" in pattern:
            import bracex  # lazily, like wcmatch

            alternatives = bracex.expand(pattern, limit=MAX_BRACE_EXPANSION)
        for alternative in alternatives:
            self._add(alternative, context, ignore_case)

    def _add(self, pattern: str, context: PathContext, ignore_case: bool) -> None:
        if pattern == "~" or pattern.startswith("~/"):
            if context.home is None:
                return
            pattern = context.home.rstrip("/") + pattern[1:]
        pattern = pattern.rstrip("/") if pattern not in ("/",) else pattern
        if pattern.startswith("/"):
            self._absolute.append(_SegmentPattern(_split_abs(pattern), ignore_case))
        elif "/" not in pattern and pattern != "**":
            self._anywhere.append(_SegmentPattern(["**", pattern], ignore_case))
        else:
            while pattern.startswith("./"):
                pattern = pattern[2:]
            self._relative.append(_SegmentPattern(_split_rel(pattern), ignore_case))

    def shapes(self) -> Iterator[tuple[PathArea, Shape, SegmentGlob | None]]:
        """Each alternative of this pattern: which segments of a request path it is
        matched against (``any``: it matches every path), and what it asks of them
        (:class:`Shape`); an ``anywhere`` one asks it of the last segment alone, and
        comes with the glob that segment must match."""
        if self._everything:
            yield "any", Shape("reach", ()), None
            return
        for anywhere in self._anywhere:
            [glob] = anywhere.groups[1]
            shape = Shape("exact", (glob.text,)) if glob.literal else Shape("other", ())
            yield "anywhere", shape, glob
        for relative in self._relative:
            yield "relative", relative.shape(), None
        for absolute in self._absolute:
            yield "absolute", absolute.shape(), None

    def match(self, subject: PathSubject) -> bool:
        if self._everything:
            return True
        relative, absolute = subject.relative, subject.absolute
        here = absolute if relative is None else relative
        if here is not None and any(p.match(here) for p in self._anywhere):
            return True
        if relative is not None and any(p.match(relative) for p in self._relative):
            return True
        return absolute is not None and any(p.match(absolute) for p in self._absolute)


def path_alternatives(pattern: str) -> list[str]:
    """The patterns ``pattern`` stands for, its ``{a,b}`` braces expanded (as
    :class:`PathGlob` matches them): ``~/{.ssh,.aws}/**`` is ``~/.ssh/**`` and
    ``~/.aws/**``. A pattern without braces is itself."""
    if "{" not in pattern:
        return [pattern]
    import bracex  # lazily, like wcmatch

    return list(bracex.expand(pattern, limit=MAX_BRACE_EXPANSION))


def path_pattern_problem(pattern: str) -> str | None:
    """Why the path pattern ``pattern`` cannot be compiled (a brace expansion over
    :data:`MAX_BRACE_EXPANSION`, a malformed class ...); None when it can. A loader
    asks this, so that a bad pattern fails at load, not at use."""
    try:
        PathGlob(pattern, PathContext(root="/", home="/"))
    except Exception as exc:  # bracex limits, malformed classes
        return str(exc)
    return None


class PathSubject(NamedTuple):
    """A request path split once into segments, in both of its forms when known
    (tuples: :func:`path_subject` keeps the last few, shared by every reader)."""

    relative: tuple[str, ...] | None
    absolute: tuple[str, ...] | None


@lru_cache(maxsize=64)
def _root_of(root: str) -> tuple[str, tuple[str, ...]]:
    """A context's root normalised, and its segments: the same for every path (a
    request's path is prepared for the gate, each ceiling and the protected table)."""
    root = posixpath.normpath(root)
    return root, tuple(_split_abs(root))


@lru_cache(maxsize=64)
def path_subject(path: str, context: PathContext) -> PathSubject:
    """Prepare a request path for matching against many PathGlobs.

    Canonical paths need no folding, but ``..`` is folded here too so that a
    relative path can never pass for "inside the project" by climbing out of it.
    A request's path is prepared for its gate, then for each ceiling (and a path
    written for the protected table): the last few are kept, a pure function of its
    arguments.
    """
    root, root_segments = _root_of(context.root) if context.root else (None, ())
    if not path.startswith("/"):
        folded = posixpath.normpath(path) if path else "."
        if folded != ".." and not folded.startswith("../"):
            segments = tuple(_split_rel(folded))
            return PathSubject(segments, (*root_segments, *segments) if root else None)
        if root is None:
            return PathSubject(None, None)
        path = posixpath.join(root, folded)
    path = posixpath.normpath(path)
    relative: tuple[str, ...] | None = None
    if root is not None and (path == root or path.startswith(root.rstrip("/") + "/")):
        relative = tuple(_split_rel(path[len(root):].lstrip("/")))
    return PathSubject(relative, tuple(_split_abs(path)))


# --------------------------------------------------------------------------- MCP arguments

class Arguments(NamedTuple):
    """An MCP call's arguments prepared once for matching: the object (None when the
    text is not one JSON object with unique keys) and its canonical text."""

    value: Mapping[str, Any] | None
    text: str


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for key, item in pairs:
        if key in value:
            raise ValueError(f"duplicate key {key!r}: JSON readers disagree on which one counts")
        value[key] = item
    return value


def load_arguments(text: str) -> Any:
    """JSON text as a value; ValueError on a duplicate key (at any depth)."""
    import json  # only MCP calls need it

    return json.loads(text, object_pairs_hook=_unique_object)


def canonical_arguments(value: Mapping[str, Any]) -> str:
    """The canonical text of an arguments object: JSON with sorted keys."""
    import json

    return json.dumps(dict(value), sort_keys=True, ensure_ascii=False)


@lru_cache(maxsize=1024)
def arguments_subject(text: str) -> Arguments:
    try:
        value = load_arguments(text)
    except ValueError:
        return Arguments(None, text)
    if not isinstance(value, dict):
        return Arguments(None, text)
    return Arguments(value, canonical_arguments(value))


def _scalar_text(value: Any) -> str | None:
    """A JSON scalar as text (``true``, ``1.5``, ``null``, a string as it is); None for
    an array or object."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)) or value is None:
        import json

        return json.dumps(value)
    return None


def _leaves(value: Any) -> Iterator[str]:
    text = _scalar_text(value)
    if text is not None:
        yield text
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


_BARE_KEY = re.compile(r'[^\s="*?]+')
_BARE_VALUE = re.compile(r'[^\s"]*')
_SPACE = re.compile(r"\s+")


def _json_string(pattern: str, pos: int) -> tuple[str, int] | None:
    import json

    try:
        value, end = json.JSONDecoder().raw_decode(pattern, pos)
    except ValueError:
        return None
    return (value, end) if isinstance(value, str) else None


def parse_conditions(pattern: str) -> list[tuple[str, str]] | None:
    """``key=value …`` as (key, value wildcard) pairs; None when ``pattern`` is not in
    that form. A key or a value may be a JSON string (``"a b"="x y*"``)."""
    conditions: list[tuple[str, str]] = []
    pos, end = 0, len(pattern)
    while pos < end:
        if pattern[pos] == '"':
            found = _json_string(pattern, pos)
            if found is None:
                return None
            key, pos = found
        else:
            bare = _BARE_KEY.match(pattern, pos)
            if bare is None:
                return None
            key, pos = bare.group(), bare.end()
        if not pattern.startswith("=", pos):
            return None
        pos += 1
        if pattern.startswith('"', pos):
            found = _json_string(pattern, pos)
            if found is None:
                return None
            value, pos = found
        else:
            bare = _BARE_VALUE.match(pattern, pos)
            assert bare is not None  # it matches the empty string
            value, pos = bare.group(), bare.end()
        conditions.append((key, value))
        space = _SPACE.match(pattern, pos)
        if space is None and pos < end:
            return None
        pos = space.end() if space is not None else pos
    return conditions or None


class _Condition:
    __slots__ = ("key", "any", "wild", "fold")

    def __init__(self, key: str, value: str, fold: bool) -> None:
        self.key = key
        self.any = value == "*"
        self.fold = fold
        self.wild = Wildcard(_fold(value) if fold else value, optional_tail=False,
                             escapes=False)

    def match(self, arguments: Mapping[str, Any]) -> bool:
        if self.key not in arguments:
            return False
        if self.any:
            return True
        value = arguments[self.key]
        if not self.fold:
            text = _scalar_text(value)
            return text is not None and self.wild.match(text)
        return any(self.wild.match(_fold(text)) for text in _leaves(value))


class ArgumentsPattern:
    """A compiled MCP arguments pattern (see docs/policy.md):

    * ``*``: any arguments;
    * ``key=value …``: every condition holds for a top-level key (an absent key fails);
      the value is a wildcard over the JSON scalar's text (``true``, ``1``, a string
      as it is); an array or object matches only ``*``. ``fold`` (deny and ask rules)
      also matches ignoring case and compatibility forms, and an array or object when
      any scalar inside it matches: a doubt falls on the safe side;
    * a JSON object with no wildcard (what "always allow" saves): that call exactly
      (compared as canonical JSON); other text with no wildcard: that text exactly;
    * anything else is the older wildcard over the JSON text, which a nested value can
      meet: :func:`spoofable` says so, and the gate withholds an allow it decides.
    """

    __slots__ = ("pattern", "_conditions", "_exact", "_text")

    def __init__(self, pattern: str, *, fold: bool = False) -> None:
        self.pattern = pattern
        self._conditions: list[_Condition] | None = None
        self._exact: str | None = None
        self._text: Wildcard | None = None
        if pattern == "*":
            self._conditions = []
            return
        parsed = parse_conditions(pattern)
        if parsed is not None:
            self._conditions = [_Condition(key, value, fold) for key, value in parsed]
            return
        exact = arguments_subject(pattern) if is_literal(pattern) else None
        if exact is not None and exact.value is not None:
            self._exact = exact.text
        else:
            self._text = Wildcard(pattern, escapes=False)

    @property
    def everything(self) -> bool:
        """``*``: any arguments at all."""
        return self._conditions == []

    @property
    def exact(self) -> str | None:
        """The canonical JSON of the one call this pattern names, if it names one: it
        matches arguments whose object is that (:attr:`Arguments.text`)."""
        return self._exact

    def match(self, subject: Arguments) -> bool:
        if self._conditions is not None:
            value = subject.value
            return value is not None and all(c.match(value) for c in self._conditions) \
                if self._conditions else True
        if self._exact is not None:
            return subject.value is not None and subject.text == self._exact
        assert self._text is not None
        return self._text.match(subject.text)


def spoofable(pattern: str) -> bool:
    """True when an arguments pattern is a wildcard over the JSON text: a nested value
    or a key order can meet it, so it can deny but never allow."""
    return not is_literal(pattern) and pattern != "*" and parse_conditions(pattern) is None
