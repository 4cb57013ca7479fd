"""Command-line options: scanning them, and matching rules whatever their spelling.

Two users:

* :mod:`dm_cc.permissions.shell` scans a command's options (:func:`scan_options`) to find
  where a wrapped command starts, which words are files and which options are risky.
* The engine compiles ``deny``/``ask`` bash rules with :func:`compile_flag_rule`, so that
  ``rm -rf *`` also catches ``rm -fr x``, ``rm -r -f x``, ``rm --recursive --force x`` and
  ``rm -R -f x``, and ``git push --force *`` catches ``git push -f origin``. A rule splits
  into a *head* (its leading literal words), a *flag set* (its option words, short clusters
  expanded and long spellings mapped through ``FLAG_ALIASES``) and a *tail* (its other
  words, a wildcard). A command matches when its non-option words start with the head,
  its flags include the rule's flags and its remaining non-option words match the tail.

:func:`wildcard_match` is the rule wildcard language: ``*`` is any run of characters
(spaces included), ``?`` one character, a trailing ``" *"`` is optional, and everything else
is literal. It is linear: the pattern is split on ``*`` and each piece is found leftmost,
which is optimal for star-separated fixed-length pieces, so no backtracking is needed.
"""

# No `from __future__ import annotations` here: NamedTuple classes build about twice as
# fast with evaluated annotations, and this module is imported at start-up.

import re
from collections.abc import Collection, Mapping, Sequence
from functools import cache, lru_cache
from typing import NamedTuple

from dm_cc.permissions.shell.tables import lookup
from dm_cc.permissions.shell.tables.flag_aliases import (
    COMMAND_ALIASES,
    FLAG_ALIASES,
    POSITIONAL_FLAGS,
    SINGLE_DASH_LONG,
)

_EMPTY: frozenset[str] = frozenset()


# --------------------------------------------------------------------------- scanning
class Option(NamedTuple):
    """One option: ``flag`` is ``-x`` (one letter of a cluster) or ``--long`` (no ``=value``);
    ``at`` is the index of the word holding its value (or of the option itself when it has
    none)."""

    flag: str
    value: str | None
    at: int


class Scan(NamedTuple):
    """Options and positional word indices; ``end`` is where scanning stopped."""

    options: tuple[Option, ...]
    positionals: tuple[int, ...]
    end: int


def scan_options(
    words: Sequence[str],
    *,
    value_opts: Collection[str] = _EMPTY,
    pair_opts: Collection[str] = _EMPTY,
    optional_opts: Collection[str] = _EMPTY,
    stop_opts: Collection[str] = _EMPTY,
    single_dash_long: bool = False,
    stop_at_positional: bool = False,
    lone_dash_option: bool = False,
    positional_re: str | None = None,
) -> Scan:
    """Split ``words`` (arguments, without the command name) into options and positionals.

    ``value_opts`` take the next word (or an attached value: ``-n5``, ``--lines=5``),
    ``pair_opts`` the next two, ``optional_opts`` only an attached value. ``--`` ends the
    options. With ``stop_at_positional`` (wrappers) scanning stops at the first positional;
    it always stops after an option in ``stop_opts``. ``end`` is where scanning stopped:
    for a wrapper, where the wrapped command starts.
    """
    options: list[Option] = []
    positionals: list[int] = []
    i, n = 0, len(words)
    while i < n:
        word = words[i]
        if word == "--":
            if stop_at_positional:
                return Scan(tuple(options), tuple(positionals), i + 1)
            positionals.extend(range(i + 1, n))
            return Scan(tuple(options), tuple(positionals), n)
        is_option = len(word) > 1 and word[0] == "-" or (word == "-" and lone_dash_option)
        if not is_option or (positional_re and re.match(positional_re, word)):
            if stop_at_positional:
                return Scan(tuple(options), tuple(positionals), i)
            positionals.append(i)
            i += 1
            continue
        found, i = _one_option(words, i, value_opts, pair_opts, optional_opts, single_dash_long)
        options.extend(found)
        if any(o.flag in stop_opts for o in found):
            return Scan(tuple(options), tuple(positionals), i)
    return Scan(tuple(options), tuple(positionals), n)


def _one_option(
    words: Sequence[str], i: int, value_opts: Collection[str], pair_opts: Collection[str],
    optional_opts: Collection[str], single_dash_long: bool,
) -> tuple[list[Option], int]:
    """The option(s) in ``words[i]`` and the index of the next unread word."""
    word, n = words[i], len(words)
    if word == "-":  # a lone dash read as an option (su -): its own flag
        return [Option("-", None, i)], i + 1
    if word.startswith("--") or single_dash_long or word in value_opts or word in pair_opts:
        name, eq, value = word.partition("=")
        if eq and (name.startswith("--") or name in value_opts):
            return [Option(name, value, i)], i + 1
        if name in value_opts:
            return [Option(name, words[i + 1] if i + 1 < n else None, i + 1)], i + 2
        if name in pair_opts:
            return [Option(name, words[i + 1] if i + 1 < n else None, i + 1)], i + 3
        return [Option(name, None, i)], i + 1
    found: list[Option] = []
    for j in range(1, len(word)):
        flag, rest = "-" + word[j], word[j + 1:]
        if flag in value_opts or flag in pair_opts:
            if rest:
                return [*found, Option(flag, rest, i)], i + 1 + (flag in pair_opts)
            following = words[i + 1] if i + 1 < n else None
            return [*found, Option(flag, following, i + 1)], i + 2 + (flag in pair_opts)
        if flag in optional_opts:
            return [*found, Option(flag, rest or None, i)], i + 1
        found.append(Option(flag, None, i))
    return found, i + 1


# --------------------------------------------------------------------------- wildcards
@lru_cache(maxsize=1024)
def _piece(piece: str) -> re.Pattern[str] | None:
    """A regex for a star-free piece containing ``?`` (None when it is plain text)."""
    if "?" not in piece:
        return None
    return re.compile(".".join(re.escape(p) for p in piece.split("?")), re.DOTALL)


def _at(piece: str, text: str, pos: int) -> bool:
    """Does ``piece`` match ``text`` exactly at ``pos``?"""
    if pos < 0 or pos + len(piece) > len(text):
        return False
    rx = _piece(piece)
    return text.startswith(piece, pos) if rx is None else rx.match(text, pos) is not None


def _find(piece: str, text: str, pos: int, end: int) -> int:
    """Leftmost index >= pos where ``piece`` fits entirely before ``end``, or -1."""
    rx = _piece(piece)
    if rx is None:
        return text.find(piece, pos, end)
    found = rx.search(text, pos, end)
    return -1 if found is None else found.start()


def _match(pattern: str, text: str) -> bool:
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return len(pattern) == len(text) and _at(pattern, text, 0)
    first, *middle, last = pieces
    tail_at = len(text) - len(last)
    if tail_at < len(first) or not _at(first, text, 0) or not _at(last, text, tail_at):
        return False
    pos = len(first)
    for piece in middle:
        if piece:
            found = _find(piece, text, pos, tail_at)
            if found < 0:
                return False
            pos = found + len(piece)
    return True


def wildcard_match(pattern: str, text: str) -> bool:
    """Match ``text`` against a rule wildcard (``*``, ``?``; a trailing ``" *"`` is
    optional, repeatedly: ``ls * *`` also matches ``ls``)."""
    while True:
        if _match(pattern, text):
            return True
        if not pattern.endswith(" *"):
            return False
        pattern = pattern[:-2]


# --------------------------------------------------------------------------- flag rules
def _canonical(word: str, aliases: Mapping[str, tuple[str, ...]], whole: bool) -> set[str]:
    """Canonical flags for one option word: ``-rf`` → {-r, -f}; ``--force`` → {-f}."""
    if word.startswith("--") or whole:
        if word in aliases:  # a value that means a flag: --interactive=never is -f
            return set(aliases[word])
        name = word.partition("=")[0]
        if name in aliases:
            return set(aliases[name])
        out = {name}
        if len(name) >= 3:  # GNU/git accept unambiguous abbreviations: --r, --rec, --forc
            for long, canon in aliases.items():
                if long.startswith(name) and long.startswith("--"):
                    out.update(canon)
        return out
    out = set()
    for letter in word[1:]:
        out.update(aliases.get("-" + letter, ("-" + letter,)))
    return out


def _abbreviated(wanted: Collection[str], options: Sequence[str]) -> set[str]:
    """The rule's long flags (``wanted``) that one of the command's ``options`` cuts short
    (``--compress=sh`` for ``--compress-program``): GNU getopt_long, git's parse-options
    and Perl's Getopt::Long accept any unambiguous prefix, so a deny or ask rule counts
    a prefix of one letter or more as every flag it could abbreviate, for any command
    (the aliases table knows the other options of only some)."""
    names = {w.partition("=")[0] for w in options if w.startswith("--") and len(w) > 2}
    return {flag for flag in wanted if flag.startswith("--")
            and any(flag.startswith(name) for name in names)}


def _split(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """A command's (option words before ``--``, other words incl. the command name)."""
    options, positional, _values = _split_marked(words)
    return options, positional


def _split_marked(words: Sequence[str]) -> tuple[list[str], list[str], set[int]]:
    """Like :func:`_split`, plus the indices (into the positional list) of words right
    after an option, which may be that option's value (``kubectl -n prod delete``)."""
    options: list[str] = []
    positional: list[str] = list(words[:1])
    values: set[int] = set()
    after_option = False
    rest = iter(words[1:])
    for word in rest:
        if word == "--":
            positional.extend(rest)
            break
        if len(word) > 1 and (word[0] == "-" or word[0] == "+" and len(positional) == 1):
            # a `+toolchain` right after the name (cargo +nightly) is an option too
            options.append(word)
            after_option = "=" not in word
        else:
            if after_option:
                values.add(len(positional))
            positional.append(word)
            after_option = False
    return options, positional, values


def _after_head(head: Sequence[str], positional: Sequence[str], values: Collection[int]
                ) -> int | None:
    """Where the command's words continue after ``head``, which must appear in order
    with only possible option values in between; None when it does not."""
    position = 1
    for word in head[1:]:
        while position < len(positional) and positional[position] != word:
            if position not in values:
                return None
            position += 1
        if position >= len(positional):
            return None
        position += 1
    return position


class FlagRule(NamedTuple):
    """A ``deny``/``ask`` bash rule that matches any spelling of its flags."""

    head: tuple[str, ...]
    flags: frozenset[str]
    tail: str

    def matches(self, words: Sequence[str]) -> bool:
        """True when the command ``words`` are covered by this rule (its leading words
        spelled as the rule spells them: ``npm i`` is ``npm install``)."""
        read = _read(tuple(words))  # (a request is matched against many rules)
        if not read.words or read.words[0] != self.head[0]:
            return False
        if not read.options and self.needs_options:
            return False  # no option, nothing standing for one: none of its flags given
        rest = _after_head(self.head, read.positional, read.values)
        if rest is None:
            return False
        have = _flags_given(_flag_key(self.head), read)
        if not self.flags <= have and not (read.options and self.flags <= have | _abbreviated(
                self.flags - have, read.options)):
            return False
        return wildcard_match(self.tail, " ".join(read.positional[rest:]))

    @property
    def needs_options(self) -> bool:
        """Whether only a command with an option word can match: the rule names flags
        and no positional word of its program stands for one (``POSITIONAL_FLAGS``)."""
        return bool(self.flags) and _flag_key(self.head) not in POSITIONAL_FLAGS

    @property
    def key(self) -> tuple[str, str | None]:
        """What a command must have for this rule to match it: its program (as the rule
        names it), and the last of the rule's leading words among its other words
        (None: the rule has one leading word). :func:`flag_keys` are a command's."""
        return self.head[0], self.head[-1] if len(self.head) > 1 else None


def flag_keys(words: Sequence[str]) -> list[tuple[str, str | None]]:
    """The :attr:`FlagRule.key` of every flag rule that can match the command ``words``
    (an index finds those rules without trying the others)."""
    read = _read(tuple(words))
    if not read.words:
        return []
    program = read.words[0]
    return [(program, None), *((program, word) for word in set(read.positional[1:]))]


def has_options(words: Sequence[str]) -> bool:
    """Whether the command ``words`` has an option word, as the flag rules read it (a
    rule that :attr:`FlagRule.needs_options` matches no command without one). A command
    none of whose words looks like one has none (``rm x1``: asked for every command a
    deny rule's program runs), unless respelling its leading words could add one."""
    if _respelling_adds_no_option():
        spaced = " " + " ".join(words[1:])  # (a word starting with - or + follows a space)
        if " -" not in spaced and " +" not in spaced:
            return False
    return bool(_read(tuple(words)).options)


@cache
def _respelling_adds_no_option() -> bool:
    """Whether no respelling of :data:`COMMAND_ALIASES` holds a word read as an option."""
    return not any(len(w) > 1 and w[0] in "-+" for words in COMMAND_ALIASES.values()
                   for w in words)


class _Read(NamedTuple):
    """A command's words as the flag rules read them: its leading words respelled
    (``npm i`` is ``npm install``), then split (:func:`_split_marked`)."""

    words: tuple[str, ...]
    options: tuple[str, ...]
    positional: tuple[str, ...]
    values: frozenset[int]


@lru_cache(maxsize=256)
def _read(words: tuple[str, ...]) -> _Read:
    spelled, canonical = lookup(COMMAND_ALIASES, words)
    if canonical is not None:
        words = (*canonical, *words[len(spelled):])
    options, positional, values = _split_marked(words)
    return _Read(words, tuple(options), tuple(positional), frozenset(values))


@lru_cache(maxsize=1024)
def _flag_key(head: tuple[str, ...]) -> tuple[str, ...]:
    return lookup(FLAG_ALIASES, head)[0]


@lru_cache(maxsize=256)
def _flags_given(key: tuple[str, ...], read: _Read) -> frozenset[str]:
    """The flags the command's options spell (under the aliases of ``key``), and those
    its positional words stand for (``POSITIONAL_FLAGS``)."""
    aliases = FLAG_ALIASES.get(key, {})
    whole = read.words[0] in SINGLE_DASH_LONG
    have: set[str] = set()
    for word in read.options:
        have |= _canonical(word, aliases, whole)
    for prefix, flag in POSITIONAL_FLAGS.get(key, ()):
        if any(w.startswith(prefix) for w in read.positional[len(key):]):
            have.add(flag)
    return frozenset(have)


def compile_flag_rule(pattern: str) -> FlagRule | None:
    """Compile a bash rule pattern; None when it has no option words worth normalising
    (or no literal head, or an option word with a wildcard other than a trailing ``*``)."""
    words = pattern.split()
    options, others = _split(words)
    # "--force*" names the flag and then anything: keep the flag, widen the tail.
    starred = [w for w in options if w.endswith("*")]
    options = [w[:-1] if w.endswith("*") else w for w in options]
    if any("*" in w.partition("=")[0] or "?" in w or w in ("-", "--") for w in options):
        return None
    head: list[str] = []
    for word in words:  # literal words before the first option or wildcard
        if len(word) > 1 and word[0] == "-" or "*" in word or "?" in word:
            break
        head.append(word)
    if not head or (not options and len(head) < 2):
        # Without options, only a command with a subcommand (`kubectl delete *`) gains
        # anything: global options may stand between them (`kubectl -n prod delete`).
        return None
    tail = " ".join(others[len(head):])
    spelled, canonical = lookup(COMMAND_ALIASES, head)  # as the words are: `npm add -g *`
    if canonical is not None:                          # is `npm install -g *`
        head = [*canonical, *head[len(spelled):]]
    aliases = lookup(FLAG_ALIASES, head)[1] or {}
    whole = head[0] in SINGLE_DASH_LONG
    flags: set[str] = set()
    for word in options:
        flags |= _canonical(word, aliases, whole)
    if starred and not tail.endswith("*"):
        tail = f"{tail} *".lstrip()
    return FlagRule(tuple(head), frozenset(flags), tail)
