"""Commands that run shell code or scripts: shells, interpreters, ``eval`` and friends.

A mixin of the :class:`~shell_commands.Analyser`, which dispatches to it from
:meth:`~shell_commands.Analyser.emit`: ``sh -c STRING``, ``sh FILE`` and a script on stdin
(:meth:`_shell`, :meth:`_stdin_shell`), ``python``/``node``... (:meth:`_interpreter`),
builtins that evaluate quoted text as code (``let``, ``read``, ``printf -v`` ...:
:meth:`_eval_builtin`), ``eval``/``alias``/``trap`` (:meth:`_builtin`) and ``cd``
(:meth:`_chdir`). Script text is handed back to the analyser to parse again; what cannot be
known yields a note, which makes the command dynamic.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from dm_cc.permissions.shell import tables
from dm_cc.permissions.shell.quoting import Word, joined
from dm_cc.permissions.shell.walk import EVALUATED, Stdin, risky_env

DEV_FD = re.compile(r"/dev/fd/\d+|/proc/self/fd/\d+")
STDIN_SCRIPTS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
INTERPRETER = re.compile(tables.INTERPRETER_RE)


class BuiltinHandling:
    """Shells, interpreters and builtins that run code (mixed into the Analyser)."""

    if TYPE_CHECKING:  # provided by the Analyser in shell_commands
        cwd: tuple[str, bool] | None

        def script(self, word: Word, depth: int) -> None: ...

        def file(self, word: Word, access: Literal["read", "edit"]) -> None: ...

        def parse(self, text: str, depth: int) -> None: ...

    def _shell(self, words: list[Word], depth: int, stdin: Stdin | None) -> str | None:
        """``sh -c STRING``, ``sh FILE`` or a script on stdin; a note when it is unknowable."""
        i, inline, from_stdin = 1, False, False
        while i < len(words):
            text = words[i].text
            if text == "--":
                i += 1
                break
            if text in tables.SHELL_VALUE_OPTS:
                i += 2
                continue
            if len(text) < 2 or text[0] not in "-+":
                break
            if text[0] == "-" and text[1] != "-":
                inline, from_stdin = inline or "c" in text, from_stdin or "s" in text
            i += 1
        operand = words[i] if i < len(words) else None
        if inline:  # no operand: xargs/find supply the script at run time
            if operand is None:
                return "runs a script supplied at run time"
            self.script(operand, depth + 1)
            return None
        if operand is not None and not from_stdin and DEV_FD.fullmatch(operand.text) \
                and operand.text not in STDIN_SCRIPTS and (stdin is None or stdin.kind == "file"):
            return "runs a script read from a file descriptor"  # sh /dev/fd/3 3<&0
        if operand is not None and not from_stdin and operand.text not in STDIN_SCRIPTS \
                and not DEV_FD.fullmatch(operand.text):
            self.file(operand, "read")
            return script_operand_note(operand, stdin)
        if stdin is not None and stdin.kind in ("heredoc", "herestring") and not stdin.dynamic:
            self.parse(stdin.script or "", depth + 1)
            return None
        return stdin_note(stdin)

    def _stdin_shell(self, stdin: Stdin | None, depth: int) -> str | None:
        """A shell reads its script from ``stdin``: parse a heredoc/here-string body; a
        pipe or non-static string is unknowable (the note says why)."""
        if stdin is not None and stdin.kind in ("heredoc", "herestring") and not stdin.dynamic:
            self.parse(stdin.script or "", depth + 1)
            return None
        if stdin is not None and stdin.kind == "pipe":
            return "runs a script read from a pipe or a non-static string"
        return stdin_note(stdin)

    def _interpreter(self, words: list[Word], stdin: Stdin | None) -> str | None:
        """``python``/``node``/... reading their program from a pipe are unknowable."""
        family = words[0].text.rstrip("0123456789.")
        inline = tables.INLINE_CODE_BY_FAMILY.get(family, tables.INLINE_CODE_OPTS)
        i = 1
        while i < len(words):
            text = words[i].text
            if len(text) > 1 and text[0] == "-":
                if text in inline or (text[1] != "-" and text[:2] in inline):
                    return None
                i += 2 if text in tables.INTERPRETER_VALUE_OPTS else 1
                continue
            if family in ("deno", "bun") and text in tables.INTERPRETER_SUBCOMMANDS:
                i += 1
                continue
            if family in ("deno", "bun") and text == "eval":
                return None
            return script_operand_note(words[i], stdin)
        return stdin_note(stdin)

    def _eval_builtin(self, name: str, words: list[Word], depth: int,
                      sensitive: list[str]) -> str | None:
        """``let``, ``read``, ``printf -v``, ``mapfile``, ``test`` ...: quoted text with
        ``$(``/`` ` ``/``${`` is evaluated (subscripts, arithmetic); ``-C CALLBACK`` runs
        code; assigning a risky variable by name (``read PATH``) is sensitive."""
        args = words[1:]
        if name == "printf":  # only the -v NAME operand is evaluated and assigned
            args = [w._replace(text=w.text[2:]) for w in args[:1] if w.text.startswith("-v")
                    and len(w.text) > 2] or (args[1:2] if args[:1] and args[0].text == "-v"
                                             else [])
        elif name in ("mapfile", "readarray", "compgen", "complete"):
            for i, word in enumerate(args):
                if word.text in tables.CALLBACK_OPTS and i + 1 < len(args):
                    sensitive.append(word.text)
                    self.script(args[i + 1], depth + 1)
        elif name == "hash" and any(w.text.startswith("-") and "p" in w.text for w in args):
            sensitive.append("-p")  # hash -p /tmp/evil git: `git` now runs /tmp/evil
        if name in ("printf", "read", "mapfile", "readarray", "let", "wait"):
            sensitive.extend(w.text.partition("=")[0] for w in args
                             if risky_env(w.text.partition("=")[0]))
        found = False
        for word in args:
            if not word.expand and EVALUATED.search(word.text):
                self.script(word, depth + 1)
                found = True
        return "evaluates a quoted string as code (an array subscript or arithmetic)" \
            if found else None

    def _builtin(self, name: str, args: list[Word], depth: int) -> None:
        """``eval ARGS``, ``alias n=CODE`` and ``trap CODE SIG`` run shell code later."""
        args = args[1:] if args and args[0].text == "--" else args
        if name == "eval" and args:
            self.script(joined(args), depth + 1)
        elif name == "alias":
            for word in args:
                if "=" in word.text:
                    self.script(word._replace(text=word.text.split("=", 1)[1]), depth + 1)
        elif name == "trap" and len(args) >= 2 and args[0].text not in ("", "-", "-p", "-l"):
            self.script(args[0], depth + 1)

    def _chdir(self, name: str, args: list[Word]) -> None:
        """Track ``cd``: later relative paths are also reported under the new directory.
        (Subshells are not tracked, so both spellings are always reported.)"""
        target = next((w for w in args if not w.text.startswith("-") or w.text == "-"), None)
        if name == "popd" or (target is not None and target.text == "-"):
            self.cwd = ("$OLDPWD", True)
            return
        text = "~" if target is None else target.text
        unknown = target is not None and (target.expand or target.glob)
        if self.cwd is not None and not text.startswith(("/", "~")):
            text, unknown = f"{self.cwd[0].rstrip('/')}/{text}", unknown or self.cwd[1]
        self.cwd = (text, unknown)


def script_operand_note(word: Word, stdin: Stdin | None) -> str | None:
    """Why a script named by ``word`` cannot be known (None when it can be)."""
    if word.procsub:
        return "runs a script read from a process substitution"
    return stdin_note(stdin) if word.text in STDIN_SCRIPTS else None


def stdin_note(stdin: Stdin | None) -> str | None:
    if stdin is not None and stdin.dynamic:
        return "runs a script read from a pipe or a non-static string"
    return None
