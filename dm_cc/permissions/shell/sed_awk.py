"""Does a sed or awk program run commands or touch files? (used by :mod:`.arguments`)

``sed -n 's/a/b/p' f`` only reads ``f``; ``sed 's/x/y/e'`` runs a command and ``sed 'w out'``
writes a file. For a program named by ``ArgSpec.script`` in :mod:`.tables` (sed, awk and
their variants) :func:`.arguments.inspect` calls :func:`sed_risky` or :func:`awk_risky` on the program text
and, when it returns True, reports the program as a ``sensitive`` token, so a prefix rule
alone cannot allow the command. Both checks err on the risky side: a sed program this
module cannot follow counts as risky; an awk program is searched for ``system(``, pipes,
output redirections, ``getline <`` and ``@`` (``@load``, ``@include``, indirect calls)
once strings, regex literals and comments are blanked out by a left-to-right reading.
"""

from __future__ import annotations

import re
from typing import Literal


def _delimited(s: str, i: int, delim: str, regex: bool) -> int:
    """Index after the closing ``delim`` of a sed part starting at ``i``, or -1."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
        elif c == delim:
            return i + 1
        elif c == "\n" and regex:
            return -1
        elif c == "[" and regex:  # a bracket expression may hold the delimiter
            j = i + 1 + (s[i + 1:i + 2] == "^")
            j += s[j:j + 1] == "]"
            close = s.find("]", j)
            i = i + 1 if close < 0 else close + 1
        else:
            i += 1
    return -1


def _sed_address(s: str, i: int) -> int:
    n = len(s)
    for _ in range(2):
        if i < n and s[i] in "0123456789+~":
            while i < n and s[i] in "0123456789~+":
                i += 1
        elif i < n and s[i] == "$":
            i += 1
        elif i + 1 < n and s[i] in "/\\":
            i = _delimited(s, i + 1, "/", True) if s[i] == "/" else \
                _delimited(s, i + 2, s[i + 1], True)
            if i < 0:
                return -1
            while i < n and s[i] in "IM":
                i += 1
        if i < n and s[i] == ",":
            i += 1
        else:
            break
    return i


def sed_risky(script: str) -> bool:
    """True when a sed program can run commands or touch files: the ``e``/``w``/``W``/
    ``r``/``R`` commands, ``s///e`` or ``s///w``. Unparsable programs count as risky."""
    s, i, n = script, 0, len(script)
    while i < n:
        if s[i] in " \t\n;{}!":
            i += 1
            continue
        if s[i] == "#":
            newline = s.find("\n", i)
            i = n if newline < 0 else newline
            continue
        i = _sed_address(s, i)
        while 0 <= i < n and s[i] in " \t!":
            i += 1
        if i < 0:
            return True
        if i >= n:
            return False
        c, i = s[i], i + 1
        if c in "ewWrR":
            return True
        if c in "sy":
            if i >= n or s[i] in "\\\n":
                return True
            i = _delimited(s, i + 1, s[i], True)
            i = _delimited(s, i, s[i - 1], c == "y") if i > 0 else -1
            if i < 0:
                return True
            while i < n and s[i] not in ";\n}#":
                if s[i] not in "gpiImM0123456789 \t":
                    return True  # e, w, or something we do not understand
                i += 1
        elif c in "aic":
            while i < n and (s[i] != "\n" or s[i - 1] == "\\"):
                i += 1
        elif c in ":btTvlLqQ":
            while i < n and s[i] not in ";\n":
                i += 1
        elif c not in "=dDgGhHnNpPxzF{}":
            return True
    return False


_AWK_RISKY = (r"\bsystem\s*\(|(?<!\|)\|(?!\|)|\b(?:print|printf)\b[^;{}\n]*>"
              r"|\bgetline\b\s*(?:[A-Za-z_$][\w$]*(?:\[[^\]]*\])?\s*)?<|@")
#: After these (ignoring blanks) a ``/`` starts a regex literal, not a division
#: (gawk(1) "Regexp constants": where an operand is expected).
_OPERAND_END = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_)]$.")


def _awk_code(program: str) -> str:
    """The program with string and regex literals and comments blanked out, read left to
    right as awk reads it (a ``#`` inside a string is not a comment, a ``"`` inside a
    regex or a comment opens no string)."""
    out: list[str] = []
    i, n, last = 0, len(program), ""
    while i < n:
        c = program[i]
        if c == "#":
            end = program.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == '"' or (c == "/" and last not in _OPERAND_END):
            j = i + 1
            while j < n and program[j] != c and not (c == "/" and program[j] == "\n"):
                j += 2 if program[j] == "\\" else 1
            out.append(" ")
            i, last = j + 1, "x"
            continue
        out.append(c)
        if not c.isspace():
            last = c
        i += 1
    return "".join(out)


def awk_risky(program: str) -> bool:
    """True when an awk program runs commands (``system()``, pipes, gawk's indirect calls
    ``@f()``), loads code (``@load``, ``@include``) or writes/reads files through
    redirections (``print > f``, ``getline line < f``). Strings, regex literals and
    comments are blanked out first."""
    return re.search(_AWK_RISKY, _awk_code(program)) is not None


_STRING = r'"((?:[^"\\\n]|\\.)*)"'
#: Files a program names in its own syntax, by language: awk's ``getline [VAR] < "F"``
#: and ``print … > "F"``/``>> "F"`` (gawk(1) "I/O Statements"); jq's ``include``/
#: ``import "F"`` (jq 1.6 manual "Modules") and yq's ``load*("F")`` (mikefarah yq v4
#: "Load" operators).
_PROGRAM_FILES: dict[str, tuple[tuple[str, Literal["read", "edit"]], ...]] = {
    "awk": ((r"\bgetline\b[^;{}\n<\"]*<\s*" + _STRING, "read"),
            (r"\b(?:print|printf)\b[^;{}\n]*?>>?\s*" + _STRING, "edit")),
    "jq": ((r"\bload(?:_str|_xml|_props|_base64)?\s*\(\s*" + _STRING, "read"),
           (r"\b(?:include|import)\s+" + _STRING, "read")),
}


def program_files(language: str, program: str) -> list[tuple[str, Literal["read", "edit"]]]:
    """The literal files an awk or jq/yq ``program`` reads or writes by itself."""
    return [(found.group(1), access) for pattern, access in _PROGRAM_FILES.get(language, ())
            for found in re.finditer(pattern, program) if found.group(1)]
