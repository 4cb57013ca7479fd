"""One shell word and its quote removal: what the walk (:mod:`.walk`) builds words with.

:class:`Word` is a word after quote removal, flagged with what only the running shell
knows (expansions, unquoted globs and brace expansion, process substitution).
:class:`WordBuilder` accumulates a word from its parts, hiding quoted characters from the
glob check; :func:`ansi_c` decodes ``$'..'``. The small tests below (:func:`globs`,
:func:`hides_expansion`, :func:`evaluates` ...) are shared by the walk and the judge's
program modules.
"""

# No `from __future__ import annotations` here: NamedTuple classes build about twice as
# fast with evaluated annotations, and this module is imported at start-up.

import re
from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from typing import NamedTuple

SHOWN = 200  # characters kept of text that is only shown (expansions, unparsable input)


class Word(NamedTuple):
    """One shell word after quote removal, and what about it only the running shell knows."""

    text: str  # unquoted value (best effort when not static)
    expand: bool = False  # parameter/command/arithmetic expansion: unknown at analysis time
    glob: bool = False  # unquoted glob or brace expansion
    procsub: bool = False  # a <( ) / >( ) process substitution


# Patterns are compiled on first use (``re`` caches them): most lines never need most of
# them, and the common cases are settled by a character test first.
BRACE = r"\{[^{}\x00]*(?:,|\.\.)[^{}\x00]*\}"
_ESCAPE = r"(?s)\\(.)"
_DQ_ESCAPE = r'\\([$`"\\\n])'
_ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*=|BASH_FUNC_[^=/]*="
_ANSI = r"(?s)\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)"
EVALUATES = "evaluates a quoted string as code (an array subscript or arithmetic)"
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
                "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def ansi_c(body: str) -> str:
    """Decode the inside of ``$'...'`` like bash (a NUL ends the string)."""

    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "xuU" and len(esc) > 1:
            code = int(esc[1:], 16)
            return chr(code) if code <= 0x10FFFF else m.group(0)
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if esc[0] == "c" and len(esc) == 2:
            return chr(ord(esc[1]) & 0x1F)
        return _ANSI_SIMPLE.get(esc, m.group(0))

    return re.sub(_ANSI, one, body).split("\x00", 1)[0]


def globs(text: str) -> bool:
    """An unquoted glob (``*``, ``?``, ``[``) or brace expansion (``{a,b}``, ``{1..3}``)."""
    return ("*" in text or "?" in text or "[" in text
            or ("{" in text and re.search(BRACE, text) is not None))


def hides_expansion(text: str) -> bool:
    """A backtick or ``$(``/``${``/``$name`` in unquoted text: an expansion the parser
    did not report (or a newline: text the parser misread)."""
    return "`" in text or ("$" in text and _parameter().search(text) is not None) or (
        "\n" in text)  # a newline cannot be in an unquoted word: the parser glued two lines


@cache
def _parameter() -> re.Pattern[str]:
    """``$`` starting an expansion: ``$(``, ``${``, ``$name``, ``$1``, ``$@`` ... (compiled
    once, on first use: unquoted ``$`` is common)."""
    return re.compile(r"\$[\w({@*#?$!-]")


def evaluates(text: str) -> bool:
    """Does bash run code in ``text`` when it evaluates it (``$(``, backticks, ``${``)?
    A quoted ``'a[$(cmd)]'`` given to ``let``, ``read``, ``unset``, ``[[ -v ]]`` ... runs
    ``cmd`` when bash reads the array subscript or arithmetic."""
    return "$(" in text or "`" in text or "${" in text


def is_assignment(text: str) -> bool:
    """``NAME=VALUE`` (or an exported function ``BASH_FUNC_name%%=() {..}``)."""
    return "=" in text and re.match(_ASSIGNMENT, text) is not None


def unescape(text: str) -> str:
    """``text`` with each backslash-quoted character unquoted."""
    return re.sub(_ESCAPE, r"\1", text) if "\\" in text else text


def unescape_double_quoted(text: str) -> str:
    """Inside double quotes a backslash quotes only ``$``, a backtick, ``"``, a backslash
    and a newline."""
    return re.sub(_DQ_ESCAPE, r"\1", text) if "\\" in text else text


class WordBuilder:
    """Accumulates a word's text and a mask in which quoted characters are hidden."""

    __slots__ = ("expand", "mask", "null", "procsub", "text")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.mask: list[str] = []
        self.expand = self.procsub = False
        self.null = False  # holds '' or $'': an empty word it expands to is kept

    def single_quoted(self, s: str) -> None:
        """``'..'`` or ``$'..'``: quoted text (``''{a,}`` keeps the empty word)."""
        self.null = self.null or not s
        self.quoted(s)

    def plain(self, s: str) -> None:
        self.text.append(s)
        self.mask.append(s)

    def quoted(self, s: str) -> None:
        self.text.append(s)
        self.mask.append("\x00" * len(s))

    def unquoted_word(self, raw: str) -> None:
        """Unquoted text: a backslash quotes the next character; ``\\<newline>`` vanishes.

        An unescaped backtick or ``$(``/``${``/``$name`` here means the parser missed an
        expansion, so the word counts as not static.
        """
        if "\\" not in raw:
            self.plain(raw)
            self.expand = self.expand or hides_expansion(raw)
            return
        start = 0
        for m in [*re.finditer(_ESCAPE, raw), None]:
            plain = raw[start:] if m is None else raw[start:m.start()]
            self.plain(plain)
            self.expand = self.expand or hides_expansion(plain)
            if m is not None:
                if m.group(1) != "\n":
                    self.quoted(m.group(1))
                start = m.end()

    def word(self) -> Word:
        mask = "".join(self.mask)
        return Word("".join(self.text), self.expand, globs(mask), self.procsub)

    def words(self) -> list[Word]:
        """The words after brace expansion (``r{m,}`` is ``rm r``; ``{a,b}`` two words).
        An expansion too large to list stays one word, flagged as a glob."""
        text, mask = "".join(self.text), "".join(self.mask)
        if "{" not in mask:
            return [Word(text, self.expand, globs(mask), self.procsub)]
        expanded = brace_expand(text, mask)
        if expanded is None:
            return [Word(text, self.expand, True, self.procsub)]
        # bash removes an empty word unless it holds quotes: ``{rm,}`` is one word, ``''{rm,}``
        # two. (The parse stage writes a word-initial ``{`` as ``""{``; ``""`` does not count.)
        return [Word(t, self.expand, globs(m), self.procsub) for t, m in expanded
                if t or self.null]


_MAX_BRACE_WORDS = 64
# Characters brace expansion may scan, for each of the word, plus slack: a group that is
# no expansion is scanned again from inside (``{`` nested deep would cost the square of
# the word), and an alternative is expanded in turn (nested deep, it would recurse as
# deep). Groups one after the other are expanded left to right, each once.
_BRACE_WORK = 4
_BRACE_SLACK = 1_024


def brace_expand(text: str, mask: str) -> list[tuple[str, str]] | None:
    """Brace expansion of one word as bash does it (``a{b,c}d``, ``{1..3}``, nested), on
    ``text`` and its quote ``mask`` (quoted characters are NUL in the mask and do not
    count). None when the result would exceed a small limit, or finding it would cost
    more than _BRACE_WORK scans of the word."""
    return _expand(text, mask, [_BRACE_WORK * len(mask) + _BRACE_SLACK])


def _expand(text: str, mask: str, work: list[int]) -> list[tuple[str, str]] | None:
    work[0] -= len(mask) + 1  # (what is left to scan, counted down by every call)
    if work[0] < 0:
        return None
    # the words so far, as pieces of text and of mask, up to `begin` in the word
    words: list[tuple[list[str], list[str]]] = [([], [])]
    begin, start, depth, i = 0, -1, 0, 0
    commas: list[int] = []
    while i < len(mask):
        ch = mask[i]
        if ch == "{" and (i == begin or mask[i - 1] != "$" or depth):
            if depth == 0:
                start, commas = i, []
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                alternatives = _alternatives(text[start + 1:i], mask[start + 1:i],
                                             [c - start - 1 for c in commas])
                if alternatives is not None:
                    expanded: list[tuple[str, str]] = []
                    for alt_t, alt_m in alternatives:
                        inner = _expand(alt_t, alt_m, work)
                        if inner is None:
                            return None
                        expanded += inner
                    if len(words) * len(expanded) > _MAX_BRACE_WORDS:
                        return None
                    head = (text[begin:start], mask[begin:start])
                    if len(expanded) == 1:  # (no copy: a word of single groups is long)
                        for pieces_t, pieces_m in words:
                            pieces_t += (head[0], expanded[0][0])
                            pieces_m += (head[1], expanded[0][1])
                    else:
                        words = [([*pt, head[0], a], [*pm, head[1], am])
                                 for pt, pm in words for a, am in expanded]
                    begin = i + 1  # what follows is scanned as a word of its own
                    i += 1
                    continue
                work[0] -= i - start  # not an expansion: go on after this `{`
                if work[0] < 0:
                    return None
                i = start
                start = -1
        elif ch == "," and depth == 1:
            commas.append(i)
        i += 1
    return [("".join(pt) + text[begin:], "".join(pm) + mask[begin:]) for pt, pm in words]


def _alternatives(text: str, mask: str, commas: list[int]) -> list[tuple[str, str]] | None:
    """The parts of ``{a,b}`` or the sequence of ``{1..3}``/``{a..e}``; None: not an
    expansion (left as written)."""
    if commas:
        bounds = [-1, *commas, len(text)]
        return [(text[a + 1:b], mask[a + 1:b]) for a, b in pairwise(bounds)]
    m = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", mask)
    if m is None:
        return None
    lo, hi, step = m.group(1), m.group(2), abs(int(m.group(3) or 1)) or 1
    if lo.lstrip("-").isdigit() != hi.lstrip("-").isdigit():
        return None
    a, b = (int(lo), int(hi)) if lo.lstrip("-").isdigit() else (ord(lo), ord(hi))
    values = range(a, b + (1 if b >= a else -1), step if b >= a else -step)
    if len(values) > _MAX_BRACE_WORDS:
        return None
    items = [str(v) if lo.lstrip("-").isdigit() else chr(v) for v in values]
    return [(v, v) for v in items]


def evaluated(words: Sequence[Word]) -> list[Word]:
    """The words whose static text bash evaluates as code (subscripts, arithmetic)."""
    return [word for word in words if not word.expand and evaluates(word.text)]


def joined(words: Sequence[Word]) -> Word:
    """Words joined by spaces, as ``eval`` and ``ssh`` do before parsing them."""
    return Word(" ".join(w.text for w in words), any(w.expand for w in words),
                any(w.glob for w in words), any(w.procsub for w in words))
