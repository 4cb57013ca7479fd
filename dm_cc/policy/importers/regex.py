"""A regular expression over a shell command as dm_cc shell wildcards that match
*at least* what it matches: the reading a deny or ask keeps when its source says
it with a regex (Gemini CLI's ``commandRegex``), which dm_cc's wildcards cannot.

    covering_patterns("git (commit|push)")   # ['*git commit*', '*git push*']
    covering_patterns("^rm\\s+-rf")          # ['rm?*']   (anchored: from the start)
    covering_patterns("(?i)curl")            # ['*']      (nothing narrower is sure)

Read as a search (anywhere in the command) unless anchored with ``^`` / ``$``.
Literal text stays; ``.``, a class, ``\\s``, ``\\d``, ``\\w`` become ``?``; anything
repeated (``*``, ``+``, ``?``, ``{m,n}``) becomes ``*``; zero-width assertions
(``\\b``, lookarounds) are dropped (widening); alternatives multiply, up to LIMIT
patterns. Flags, back-references and what else this does not know give ``*``.
Each pattern is then cut at the first shell operator (``| ; & < > ( )`` …, which
dm_cc judges apart: a pattern is matched against one simple command), quotes are
left out (dm_cc judges a command without them) and a program's path is reduced to
its name (``/usr/bin/rm`` is judged as ``rm``).
"""

from __future__ import annotations

import re

LIMIT = 16                    # patterns one regex may become; more: '*'
_CLASSES = "dDwWsS"           # \d \w \s …: one character
_ZERO_WIDTH = "bBAZzG"        # \b …: dropped
_OPERATORS = re.compile(r"[|;&<>()`\n]|\$\(")
_START, _END = "\x00", "\x01"   # where an anchor stood in an expansion


class _Unknown(Exception):
    """A construct this reader does not know: nothing narrower than '*' is sure."""


def covering_patterns(regex: str) -> list[str]:
    """Shell wildcards whose union matches every command ``regex`` finds (see the
    module docstring); ``['*']`` when nothing narrower is sure."""
    try:
        reader = _Reader(regex)
        alternatives = reader.alternatives()
        if reader.pos != len(regex):
            raise _Unknown
    except (_Unknown, IndexError):
        return ["*"]
    patterns = [_finish(text) for text in alternatives]
    return ["*"] if "*" in patterns else list(dict.fromkeys(patterns))


def _finish(text: str) -> str:
    """One expansion (_START/_END marking anchors) as a dm_cc shell pattern."""
    start, end = text.startswith(_START), text.endswith(_END)
    body = text.replace(_START, "").replace(_END, "")
    if cut := _OPERATORS.search(body):
        body, end = body[:cut.start()], False
    body = body.replace('"', "").replace("'", "")
    program, space, rest = body.partition(" ")
    if "/" in program.rstrip("/"):
        program, start = program.rstrip("/").rsplit("/", 1)[1], False
    body = program + space + rest
    pattern = ("" if start else "*") + body + ("" if end else "*")
    return re.sub(r"(?<!\\)\*+", "*", pattern) or "*"


class _Reader:
    """A recursive reader of the regex subset (see the module docstring): each
    method returns the expansions (dm_cc wildcard text) of what it read."""

    def __init__(self, regex: str) -> None:
        self.regex = regex
        self.pos = 0

    def alternatives(self) -> list[str]:
        found = self.sequence()
        while self.pos < len(self.regex) and self.regex[self.pos] == "|":
            self.pos += 1
            found += self.sequence()
        return _capped(found)

    def sequence(self) -> list[str]:
        found = [""]
        while self.pos < len(self.regex) and self.regex[self.pos] not in "|)":
            atom = self.atom()
            if self._quantified():
                atom = ["*"]
            found = _capped([a + b for a in found for b in atom])
        return found

    def atom(self) -> list[str]:
        char = self.regex[self.pos]
        self.pos += 1
        if char == "\\":
            return [self._escape()]
        if char == "(":
            return self._group()
        if char == "[":
            self._class()
            return ["?"]
        if char == ".":
            return ["?"]
        if char in "^$":
            at_start, at_end = self.pos == 1, self.pos == len(self.regex)
            if char == "^" and at_start:
                return [_START]
            if char == "$" and at_end:
                return [_END]
            return [""]       # elsewhere: an anchor dm_cc cannot place; dropped (wider)
        if char in "*+?{":
            raise _Unknown    # a repeat of nothing
        return [_literal(char)]

    def _escape(self) -> str:
        char = self.regex[self.pos]
        self.pos += 1
        if char in _CLASSES:
            return "?"
        if char in _ZERO_WIDTH:
            return ""
        if char.isalnum():
            raise _Unknown    # \1, \x41, \n …: not read
        return _literal(char)

    def _group(self) -> list[str]:
        if self.regex.startswith("?:", self.pos):
            self.pos += 2
        elif self.regex.startswith(("?=", "?!", "?<=", "?<!"), self.pos):
            self.pos += 3 if self.regex[self.pos + 1] in "=!" else 4
            self.alternatives()
            self._close()
            return [""]       # a lookaround: dropped (wider)
        elif self.regex.startswith("?P<", self.pos) or self.regex.startswith("?<", self.pos):
            self.pos = self.regex.index(">", self.pos) + 1
        elif self.regex.startswith("?", self.pos):
            raise _Unknown    # flags, conditionals …
        found = self.alternatives()
        self._close()
        return found

    def _close(self) -> None:
        if self.regex[self.pos] != ")":
            raise _Unknown
        self.pos += 1

    def _class(self) -> None:
        if self.regex[self.pos] == "^":
            self.pos += 1
        if self.regex[self.pos] == "]":
            self.pos += 1
        while self.regex[self.pos] != "]":
            self.pos += 2 if self.regex[self.pos] == "\\" else 1
        self.pos += 1

    def _quantified(self) -> bool:
        """Whether a repeat follows (and skip it, with its lazy or possessive mark)."""
        rest = self.regex[self.pos:]
        repeat = re.match(r"[*+?]|\{\d*(?:,\d*)?\}", rest)
        if repeat is None:
            return False
        self.pos += repeat.end()
        if self.pos < len(self.regex) and self.regex[self.pos] in "?+":
            self.pos += 1
        return True


def _literal(char: str) -> str:
    return "\\" + char if char in "\\*?" else char


def _capped(found: list[str]) -> list[str]:
    return found if len(found) <= LIMIT else ["*"]
