"""Text bash evaluates later as code: the tests the walk (:mod:`.walk`) applies to values
it stores and to the places that evaluate them.

bash(1) evaluates stored text in arithmetic (``(( ))``, ``$(( ))``, ``let``, ``[[ x -eq
y ]]``, ``declare -i``), in array subscripts and through ``${!x}`` and ``${x@P}``; a value
``'a[$(cmd)]'`` runs ``cmd`` there. It also runs ``PROMPT_COMMAND`` and the
substitutions in the prompt strings (``PS4`` under ``set -x``). These are plain functions
of text, the text of a node asked by position (:mod:`.spans`: nested constructs cost what
they hold, once); the walk turns what they find into :class:`~.records.Deferred` and
:class:`~.records.Script` records.
"""

from __future__ import annotations

import re
from functools import cache

from dm_cc.permissions.shell.quoting import SHOWN, Word, evaluates
from dm_cc.permissions.shell.records import Deferred, Noted, Record, Script
from dm_cc.permissions.shell.spans import SourceText, View
from dm_cc.permissions.shell.tables.environment import (
    CODE_VARIABLES,
    PROMPT_VARIABLES,
    risky_env,
    runs_value,
)


def may_hold_code(value: str) -> bool:
    """A stored value whose text is unknown (``$x``, ``$(..)``) or holds a substitution
    bash would run when it evaluates it (``'a[$(cmd)]'``). ``$(( .. ))`` alone stores a
    number."""
    if "$" not in value and "`" not in value:
        return False
    return number_only().fullmatch(value) is None


def may_hold_code_at(source: SourceText, value: View) -> bool:
    """:func:`may_hold_code` of a node's text, asked by position."""
    if source.first(_code_character(), value) is None:
        return False
    return number_only().fullmatch(*value) is None


@cache
def _code_character() -> re.Pattern[str]:
    return re.compile(r"[$`]")


@cache
def number_only() -> re.Pattern[str]:
    """``$(( arithmetic ))`` with no substitution inside: its value is a number."""
    return re.compile(r"\$\(\([^$`]*\)\)")


@cache
def _name_character() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z_$`]")


def arithmetic_names(view: View) -> bool:
    """Arithmetic text that names a variable (whose value bash evaluates in turn). (The
    search stops at the first name: nested arithmetic starts with one, a ``$``.)"""
    return _name_character().search(*view) is not None


def arithmetic(source: SourceText, view: View) -> list[Record]:
    """``(( ))``, ``$(( ))``, ``for (( ))``: an evaluating context when it names a variable;
    positional parameters come from outside; an assignment to a risky variable sets it.
    (Asked by position: nested arithmetic costs what it holds, once.)"""
    string, start, end = view
    lead = start
    while lead < end and string[lead] == "$":
        lead += 1
    body = View(string, lead + 2, end - 2)  # inside (( ))
    if body.end <= body.start or not arithmetic_names(body):
        return []
    shown = string[start:min(end, start + SHOWN)]
    found: list[Record] = [Deferred(shown, False)]
    if source.first(positional(), body) is not None:
        found.append(Deferred(shown, True))
    risky = source.within(arithmetic_assignment(), body, _sets_risky) or []
    for name in dict.fromkeys(m.group(1) or m.group(2) for m in risky):
        found.append(Noted([Word(shown)], (name,), f"sets {name}"))
    return found


def _sets_risky(assignment: re.Match[str]) -> bool:
    return risky_env(assignment.group(1) or assignment.group(2))


def assigned_name(source: SourceText, view: View) -> View | None:
    """Where ``${NAME:=value}`` (``${NAME=value}``, ``${a[i]:=value}``) names what it
    assigns: the text after ``${`` up to the first ``:``, then the first ``=``; None
    when the expansion assigns nothing. (A name, a subscript up to its first ``]``,
    then ``=`` or ``:=``.)"""
    string, start, end = view
    m = _expansion_name().match(string, start, end)
    if m is None:
        return None
    after = m.end()
    if string.startswith("[", after, end):
        close = source.find("]", View(string, after, end))
        after = close + 1 if close >= 0 else -1
    if after < 0 or not (string.startswith("=", after, end)
                         or string.startswith(":=", after, end)):
        return None
    colon = source.find(":", View(string, start + 2, end))
    colon = end if colon < 0 else colon
    equals = source.find("=", View(string, start + 2, colon))
    return View(string, start + 2, colon if equals < 0 else equals)


@cache
def _expansion_name() -> re.Pattern[str]:
    return re.compile(r"\$\{[A-Za-z_]\w*")


def code_value(name: str, word: Word) -> list[Script]:
    """``PROMPT_COMMAND=CODE`` is run as shell code, and so is a command-valued variable
    (``GIT_SSH_COMMAND=CMD``, ``EDITOR=CMD``: the program that reads it runs it);
    ``PS4='$(cmd)'`` (and the other prompts) runs its substitutions when bash expands
    the prompt: judge them too."""
    word = word._replace(text=word.text.partition("=")[2])  # the word is NAME=VALUE
    if name in CODE_VARIABLES:
        return [Script(word)]
    if runs_value(name) and word.text.strip("|"):  # LESSOPEN='|cmd %s' pipes from cmd
        return [Script(word._replace(text=word.text.lstrip("|")))]
    if name in PROMPT_VARIABLES and (word.expand or evaluates(word.text)):
        text = word.text.replace("\\", "\\\\").replace('"', '\\"')
        return [Script(word._replace(text=f': "{text}"'))]
    return []


def substitutions(text: str) -> list[str] | None:
    """The bodies of the ``$(..)`` and backtick substitutions in ``text`` (None when they
    do not close). (A scan that jumps from one character that matters to the next: the
    walk asks it of each level of ``${x:-${x:-…}}``, each holding all the rest.)"""
    bodies: list[str] = []
    i = 0
    while (m := _opening().search(text, i)) is not None:
        i = m.start()
        if text[i] == "\\":
            i += 2  # an escaped character: skipped
        elif text[i] == "`":  # up to the next unescaped backtick
            end = i + 1
            while (stop := _backtick_end().search(text, end)) is not None \
                    and text[stop.start()] == "\\":
                end = stop.start() + 2
            if stop is None:
                return None
            bodies.append(text[i + 1:stop.start()])
            i = stop.start() + 1
        else:  # `$(`: up to its `)`, quotes and nested parentheses counted
            depth, j = 1, i + 2
            while depth:
                part = _parenthesis_or_quote().search(text, j)
                if part is None:
                    return None
                ch, j = part.group(), part.end()
                if ch in "'\"":
                    j = text.find(ch, j) + 1  # (a quote is closed by the same character)
                    if j == 0:
                        return None
                else:
                    depth += 1 if ch == "(" else -1
            bodies.append(text[i + 2:j - 1])
            i = j
    return bodies


@cache
def _opening() -> re.Pattern[str]:
    return re.compile(r"[\\`]|\$\(")


@cache
def _backtick_end() -> re.Pattern[str]:
    return re.compile(r"[`\\]")


@cache
def _parenthesis_or_quote() -> re.Pattern[str]:
    return re.compile(r"[()'\"]")


@cache
def backtick_escape() -> re.Pattern[str]:
    return re.compile(r"\\([$`\\])")


@cache
def positional() -> re.Pattern[str]:
    """A positional or special parameter whose value comes from outside the line."""
    return re.compile(r"\$(?:[0-9@*]|\{[#!]?[0-9@*])")


@cache
def test_evaluates() -> re.Pattern[str]:
    """``[[ ]]`` operators that evaluate their operands (arithmetic, ``-v`` subscripts)."""
    return re.compile(r"(?:^|\s)-(?:eq|ne|lt|le|gt|ge|v)(?=\s)")


@cache
def arithmetic_assignment() -> re.Pattern[str]:
    """A variable arithmetic assigns: ``x = 1``, ``x += 1``, ``x++``, ``--x``."""
    return re.compile(r"([A-Za-z_]\w*)\s*(?:(?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--)"
                      r"|(?:\+\+|--)\s*([A-Za-z_]\w*)")
