"""One YAML document read from its event stream: the plain data and the line of
each value in one pass, with what aliases and nesting may cost bounded.

Why not ``yaml.load`` and a walk over the composed nodes: composing a node graph
(every scalar resolved, two marks per node) and constructing from it costs about
three times reading the events, and a large generated policy (10,000 rules) is
mostly that cost. Here each event becomes data directly, and its line is taken as
it passes.

What is bounded, and why (a repository's policy file is hostile input):

* **Aliases.** An alias stands for a copy of what its anchor names, and whoever
  walks the data (validation, the line index) walks every copy: nine aliases of
  nine aliases of ... make a 400-byte file into 9**8 values (the "billion laughs").
  So what aliases add (the values of each copy, but the alias itself) may be at
  most as many values as the file writes out itself, or ``MIN_ALIAS_BUDGET`` in a
  smaller file, counted as it is read: aliases can at most double what a file
  costs, and a file without aliases costs what it is, however large. Merge keys
  (``<<: *a``) copy too, and are counted alike. An alias inside what its own anchor
  names (``&a [*a]``: an endless value) is refused.
* **Nesting.** Collections nested more than ``MAX_DEPTH`` deep are refused,
  including depth that aliases add (an alias of a deep value placed deep): no
  file dm_cc reads needs a tenth of it, and every walk of the data recurses.

A refusal names the line and column of the alias or the collection that crosses
the bound, found in the same pass, before anything beyond the bound is copied.
Lines below an alias are those below its anchor (copied, within the bound), as a
walk over the composed nodes gave them. What this reader does not build itself
(merge keys, complex keys, collections with an explicit tag other than
``!!map``/``!!seq``, scalar tags SafeLoader has no constructor for) it still reads
to the end under the same bounds, and then PyYAML's SafeLoader builds the data
from the document (:attr:`Read.plain` is False): within the bounds, the data is
always what ``yaml.safe_load`` gives (tests/config/test_yaml_stream.py compares).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import yaml
from yaml.composer import ComposerError
from yaml.events import (
    AliasEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from dm_cc.errors import ConfigError

LinePath = tuple[Any, ...]

#: Collections nested deeper than this are refused (aliases count where they land).
MAX_DEPTH = 100
#: What aliases may add to any document, however small (a larger one's aliases may
#: add as many values as it writes out).
MIN_ALIAS_BUDGET = 100_000

_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
#: Scalar tags SafeLoader's constructor turns into one plain value each.
_SCALARS = frozenset(_TAG + name for name in ("null", "bool", "int", "float", "binary",
                                              "timestamp"))
_NO_KEY = object()


class _Anchored:
    """What an anchor names: its value, its raw text (a scalar's; None for a
    collection), the line it starts on, and, for its aliases, how many values one
    copy has, how deep it nests, and its line entries (``entries[start:end]``,
    their paths below ``prefix`` values long)."""

    __slots__ = ("value", "raw", "line", "mark", "open", "size", "height", "start", "end",
                 "prefix")

    def __init__(self, value: Any, raw: str | None, line: int, mark: yaml.Mark) -> None:
        self.value, self.raw, self.line, self.mark = value, raw, line, mark
        self.open = False                  # a collection still being read
        self.size, self.height, self.start, self.end, self.prefix = 1, 0, 0, 0, 0


class _Open:
    """A collection being read: its data, its path, and where its next value goes
    (for a mapping: the key read and waiting for its value, with its path)."""

    __slots__ = ("data", "path", "is_map", "index", "key", "key_path", "seen", "anchored",
                 "deepest")

    def __init__(self, data: Any, path: LinePath, is_map: bool) -> None:
        self.data, self.path, self.is_map = data, path, is_map
        self.index = 0
        self.key: Any = _NO_KEY
        self.key_path: LinePath = ()
        self.seen: dict[str, int] = {}
        self.anchored: _Anchored | None = None
        self.deepest = 0


class Read(NamedTuple):
    """What :func:`read_document` found: the data (None for an empty document),
    the line of each key path, whether the data was built here (``plain``; else
    the caller has SafeLoader build it), and the first duplicate key, if any
    (``(line, message)``: reported after any syntax error, as composing first did)."""

    data: Any
    lines: dict[LinePath, int]
    plain: bool
    duplicate: tuple[int, str] | None


class _Reader:
    """The event loop of :func:`read_document` and its state (see the module's doc)."""

    def __init__(self, loader: Any, path: str, error: type[ConfigError]) -> None:
        self.loader, self.path, self.error = loader, path, error
        self.added = 0                     # values the aliases so far have added
        self.anchors: dict[str, _Anchored] = {}
        self.stack: list[_Open] = []
        self.entries: list[tuple[LinePath, int]] = []
        self.plain = not loader.yaml_path_resolvers
        self.duplicate: tuple[int, str] | None = None
        self.deepest = 0                   # the deepest nesting reached (aliases included)
        self.resolvers = loader.yaml_implicit_resolvers
        self.wildcard = None in self.resolvers
        self.root_mark: Any = None

    # ------------------------------------------------------------------ the stream

    def document(self) -> Read:
        get = self.loader.get_event
        get()                                            # StreamStart
        if isinstance(get(), StreamEndEvent):            # (else DocumentStart)
            return Read(None, {}, True, None)
        data = self.root(get)
        get()                                            # DocumentEnd
        event = get()
        if not isinstance(event, StreamEndEvent):
            raise ComposerError("expected a single document in the stream", self.root_mark,
                                "but found another document", event.start_mark)
        return Read(data, dict(self.entries), self.plain, self.duplicate)

    def root(self, get: Any) -> Any:
        """Read the document's root value and everything in it, in one loop (no
        recursion: the depth is :attr:`stack`'s), and return it."""
        stack = self.stack
        while True:
            event = get()
            kind = type(event)
            parent = stack[-1] if stack else None
            if kind is MappingStartEvent or kind is SequenceStartEvent:
                self.collection(event, parent, kind is MappingStartEvent)
                continue
            if kind is ScalarEvent:
                value = self.scalar(event)
                raw: str | None = event.value
                line = event.start_mark.line + 1
                if event.anchor is not None:
                    self.anchor(event, _Anchored(value, raw, line, event.start_mark))
                anchored = None
            elif kind is AliasEvent:
                anchored = self.aliased(event)
                value, raw, line = anchored.value, anchored.raw, anchored.line
            else:                                        # the end of a mapping or sequence
                done = stack.pop()
                if done.anchored is not None:
                    self.close_anchor(done)
                if not stack:
                    return done.data
                parent = stack[-1]
                if parent.is_map and parent.key is _NO_KEY:
                    self.take_key(parent, _line(event), done.data, None)  # a complex key
                else:
                    self.store(parent, done.data)
                continue
            if parent is None:                           # a scalar document
                self.root_mark = event.start_mark
                self.place(parent, line)
                return value
            if parent.is_map and parent.key is _NO_KEY:
                self.take_key(parent, line, value, raw)
                continue
            path = self.place(parent, line)
            if anchored is not None:
                self.copy_lines(anchored, path)
            self.store(parent, value)

    # ------------------------------------------------------------------ values

    def scalar(self, event: Any) -> Any:
        """A scalar's value, as SafeLoader constructs it (its tag resolved as the
        composer does); one it does not construct (a merge key, an unknown tag) is
        left to SafeLoader: the document is not :attr:`plain`."""
        tag, value = event.tag, event.value
        if tag is None or tag == "!":
            if not (event.implicit[0] and (self.wildcard or value[:1] in self.resolvers)):
                return value                             # no implicit tag can apply: a str
            tag = self.loader.resolve(ScalarNode, value, event.implicit)
        if tag == _STR:
            return value
        if tag not in _SCALARS:
            self.plain = False
            return value
        node = ScalarNode(tag, value, event.start_mark, event.end_mark, style=event.style)
        try:
            return self.loader.yaml_constructors[tag](self.loader, node)
        except ValueError as exc:            # an int too long for Python: no YAML error
            raise self.error(self.path, event.start_mark.line + 1,
                             f"invalid value {_clip(value)!r}: {exc}",
                             event.start_mark.column + 1) from None

    def collection(self, event: Any, parent: _Open | None, is_map: bool) -> None:
        """A mapping or sequence starts: open it where it goes, within MAX_DEPTH."""
        line = event.start_mark.line + 1
        depth = len(self.stack) + 1
        if depth > MAX_DEPTH:
            raise self.error(self.path, line, f"nested deeper than {MAX_DEPTH} levels",
                             event.start_mark.column + 1)
        self.deepest = max(self.deepest, depth)
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(MappingNode if is_map else SequenceNode, None,
                                      event.implicit)
        if tag != (_MAP if is_map else _SEQ):
            self.plain = False
        if parent is not None and parent.is_map and parent.key is _NO_KEY:
            path: LinePath = (*parent.path, object())   # a complex key: a place no loc names
            self.plain = False
        else:
            path = self.place(parent, line)
            if parent is None:
                self.root_mark = event.start_mark
        opened = _Open({} if is_map else [], path, is_map)
        self.stack.append(opened)
        if event.anchor is not None:
            anchored = _Anchored(opened.data, None, line, event.start_mark)
            anchored.start, anchored.prefix, anchored.open = len(self.entries), len(path), True
            opened.anchored, opened.deepest = anchored, self.deepest
            self.deepest = depth
            self.anchor(event, anchored)

    def place(self, parent: _Open | None, line: int) -> LinePath:
        """The path of the value about to be read in ``parent``, its line recorded
        (a mapping's value is on its key's line, recorded with the key)."""
        if parent is None:
            self.entries.append(((), line))
            return ()
        if parent.is_map:
            return parent.key_path
        path = (*parent.path, parent.index)
        parent.index += 1
        self.entries.append((path, line))
        return path

    def take_key(self, parent: _Open, line: int, key: Any, raw: str | None) -> None:
        """A mapping's key was read, on ``line`` (``raw``: its text, None when it is
        no scalar: a place no loc names)."""
        if raw is None:
            parent.key, parent.key_path = None, (*parent.path, object())
            self.plain = False
            return
        first = parent.seen.get(raw)
        if first is None:
            parent.seen[raw] = line
        elif self.duplicate is None:
            self.duplicate = (line, f"duplicate key {raw!r} (first at line {first})")
        parent.key, parent.key_path = key, (*parent.path, raw)
        self.entries.append((parent.key_path, line))

    def store(self, parent: _Open, value: Any) -> None:
        """``value`` goes into ``parent``: its next item, or the value of its key."""
        if not parent.is_map:
            parent.data.append(value)
            return
        if self.plain:
            try:
                parent.data[parent.key] = value
            except TypeError:                # an unhashable key: SafeLoader says so
                self.plain = False
        parent.key = _NO_KEY

    # ------------------------------------------------------------------ anchors, aliases

    def anchor(self, event: Any, anchored: _Anchored) -> None:
        first = self.anchors.get(event.anchor)
        if first is not None:
            raise ComposerError(f"found duplicate anchor {event.anchor!r}; first occurrence",
                                first.mark, "second occurrence", event.start_mark)
        self.anchors[event.anchor] = anchored

    def close_anchor(self, done: _Open) -> None:
        """An anchored collection ends: what one copy of it costs is now known."""
        anchored = done.anchored
        assert anchored is not None
        anchored.open = False
        anchored.end = len(self.entries)
        anchored.size = anchored.end - anchored.start + 1
        anchored.height = self.deepest - len(self.stack)    # its own level and those below
        self.deepest = max(done.deepest, self.deepest)

    def aliased(self, event: Any) -> _Anchored:
        """What an alias names, if a copy of it here stays within the bounds."""
        anchored = self.anchors.get(event.anchor)
        mark = event.start_mark
        if anchored is None:
            raise ComposerError(None, None, f"found undefined alias {event.anchor!r}", mark)
        where = (self.path, mark.line + 1)
        if anchored.open:
            raise self.error(*where, f"alias *{event.anchor} is inside the value its anchor "
                             f"names (line {anchored.line}): that value would never end",
                             mark.column + 1)
        written = len(self.entries) - self.added   # each value read has one entry; a copy, one each
        self.added += anchored.size - 1
        if self.added > max(MIN_ALIAS_BUDGET, written):
            raise self.error(*where, f"document too large after expanding aliases: with "
                             f"*{event.anchor} here, aliases add {self.added} values, more than "
                             f"the file writes out ({written}) and than {MIN_ALIAS_BUDGET} "
                             "(a YAML alias bomb?)", mark.column + 1)
        depth = len(self.stack) + anchored.height
        if depth > MAX_DEPTH:
            raise self.error(*where, f"nested deeper than {MAX_DEPTH} levels once "
                             f"*{event.anchor} is expanded", mark.column + 1)
        self.deepest = max(self.deepest, depth)
        return anchored

    def copy_lines(self, anchored: _Anchored, path: LinePath) -> None:
        """The lines below an alias are those below its anchor (within the bound)."""
        entries, cut = self.entries, anchored.prefix
        for below, line in entries[anchored.start:anchored.end]:
            entries.append(((*path, *below[cut:]), line))


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1


def _clip(text: str, most: int = 40) -> str:
    return text if len(text) <= most else f"{text[:most]}…"


def read_document(loader: Any, path: str, error: type[ConfigError]) -> Read:
    """Read the one document ``loader`` (a SafeLoader or CSafeLoader on its text)
    parses. YAML's own errors propagate as ``yaml.YAMLError``; the bounds (and a
    value Python cannot hold) raise ``error`` naming ``path``, line and column."""
    return _Reader(loader, path, error).document()
