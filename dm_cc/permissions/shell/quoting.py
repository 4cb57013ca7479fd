"""One shell word and its quote removal: what the walk (:mod:`.walk`) builds words with.

:class:`Word` is a word after quote removal, flagged with what only the running shell
knows (expansions, unquoted globs and brace expansion, process substitution).
:class:`WordBuilder` accumulates a word from its parts, hiding quoted characters from the
glob check; :func:`ansi_c` decodes ``$'..'``. The regular expressions are shared with the
tree walk; :func:`joined` and :func:`evaluated` are used by the judge's program modules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple


class Word(NamedTuple):
    """One shell word after quote removal, and what about it only the running shell knows."""

    text: str  # unquoted value (best effort when not static)
    expand: bool = False  # parameter/command/arithmetic expansion: unknown at analysis time
    glob: bool = False  # unquoted glob or brace expansion
    procsub: bool = False  # a <( ) / >( ) process substitution


GLOB = re.compile(r"[*?\[]")
BRACE = re.compile(r"\{[^{}\x00]*(?:,|\.\.)[^{}\x00]*\}")
ESCAPE = re.compile(r"\\(.)", re.DOTALL)
HIDDEN_EXPANSION = re.compile(r"`|\$[\w({@*#?$!-]")
DQ_ESCAPE = re.compile(r'\\([$`"\\\n])')
#: Text bash evaluates when it reads an array subscript or arithmetic: a quoted
#: ``'a[$(cmd)]'`` given to ``let``, ``read``, ``unset``, ``[[ -v ]]`` ... runs ``cmd``.
EVALUATED = re.compile(r"\$\(|`|\$\{")
EVALUATES = "evaluates a quoted string as code (an array subscript or arithmetic)"
#: ``NAME=VALUE`` (or an exported function ``BASH_FUNC_name%%=() {..}``) as a word.
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=|BASH_FUNC_[^=/]*=")
_ANSI = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)",
                   re.DOTALL)
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

    return _ANSI.sub(one, body).split("\x00", 1)[0]


class WordBuilder:
    """Accumulates a word's text and a mask in which quoted characters are hidden."""

    __slots__ = ("expand", "mask", "procsub", "text")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.mask: list[str] = []
        self.expand = self.procsub = False

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
        start = 0
        for m in [*ESCAPE.finditer(raw), None]:
            plain = raw[start:] if m is None else raw[start:m.start()]
            self.plain(plain)
            self.expand = self.expand or HIDDEN_EXPANSION.search(plain) is not None
            if m is not None:
                if m.group(1) != "\n":
                    self.quoted(m.group(1))
                start = m.end()

    def word(self) -> Word:
        mask = "".join(self.mask)
        glob = GLOB.search(mask) is not None or BRACE.search(mask) is not None
        return Word("".join(self.text), self.expand, glob, self.procsub)


def evaluated(words: Sequence[Word]) -> list[Word]:
    """The words whose static text bash evaluates as code (subscripts, arithmetic)."""
    return [word for word in words if not word.expand and EVALUATED.search(word.text)]


def joined(words: Sequence[Word]) -> Word:
    """Words joined by spaces, as ``eval`` and ``ssh`` do before parsing them."""
    return Word(" ".join(w.text for w in words), any(w.expand for w in words),
                any(w.glob for w in words), any(w.procsub for w in words))
