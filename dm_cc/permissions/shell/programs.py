"""Programs that run shell code or scripts: shells, interpreters, ``eval`` and friends.

Each function reads one command's words (and where its stdin comes from) and returns an
:class:`~.records.Outcome`: the scripts to parse again, the files read, the sensitive
tokens, and a note when what runs cannot be known (which makes the command dynamic).
``sh -c STRING``, ``sh FILE`` and a script on stdin (:func:`shell`, :func:`stdin_shell`),
``source FILE`` (:func:`source`), ``python``/``node``... (:func:`interpreter`), builtins
that evaluate quoted text as code (``let``, ``read``, ``printf -v`` ...:
:func:`eval_builtin`) and ``eval``/``alias``/``trap`` (:func:`code_builtin`). Pure: the
judge applies the outcome.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from functools import cache

from dm_cc.permissions.shell.quoting import EVALUATES, Word, evaluated, joined
from dm_cc.permissions.shell.records import Effect, FileUse, Outcome, Parse, Script, Sensitive, Stdin
from dm_cc.permissions.shell.tables.environment import risky_env
from dm_cc.permissions.shell.tables.interpreters import (
    CALLBACK_OPTS,
    FISH_CODE_OPTS,
    FISH_VALUE_OPTS,
    FISH_WRITE_OPTS,
    INLINE_CODE_BY_FAMILY,
    INLINE_CODE_OPTS,
    INTERPRETER_FAMILIES,
    INTERPRETER_SUBCOMMANDS,
    INTERPRETER_VALUE_OPTS,
    SHELL_VALUE_OPTS,
)

# A descriptor as a path (proc(5) /proc/[pid]/fd, /proc/thread-self; /dev/fd and /dev/stdin
# are links into it): the kernel reads `//`, `/./` and `..` as it walks the path, so each
# spelling is one (`/dev//stdin`, `/proc/self/../thread-self/fd/0`)
_DEV_FD = r"dev/fd/(\d+)|dev/std(in)|proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd/(\d+)"
_VERSIONED = "(?:" + "|".join(INTERPRETER_FAMILIES) + r")[\d.]*"
_FROM_PIPE = "runs a script read from a pipe or a non-static string"
_FROM_FD = "runs a script read from a file descriptor or a process substitution"
_CLIMBS = "runs a script that is a descriptor or a file, by where it is run"
_INHERITED = "runs a script read from an input an enclosing construct or descriptor supplies"


def shell(words: list[Word], stdin: Stdin | None) -> Outcome:
    """``sh -c STRING``, ``sh FILE`` or a script on stdin."""
    i, inline, from_stdin = 1, False, False
    while i < len(words):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if text in SHELL_VALUE_OPTS:
            if text in ("--rcfile", "--init-file") and i + 1 < len(words):
                startup = words[i + 1]  # bash(1) INVOCATION: run first (with -i)
                if startup.procsub or (dev_fd(startup.text) and not stdin_script(startup.text)):
                    return Outcome(_FROM_FD)
            i += 2
            continue
        if len(text) < 2 or text[0] not in "-+":
            break
        if text[0] == "-" and text[1] != "-":
            inline, from_stdin = inline or "c" in text, from_stdin or "s" in text
        # each o or O of a cluster takes the next word (`bash -eo pipefail x.sh` runs x.sh)
        i += 1 + (sum(text.count(letter) for letter in "oO") if text[1] != "-" else 0)
    operand = words[i] if i < len(words) else None
    if inline:  # no operand: xargs/find supply the script at run time
        if operand is None:
            return Outcome("runs a script supplied at run time")
        return Outcome(None, (Script(operand),))
    if operand is not None and not from_stdin and dev_fd(operand.text) \
            and not stdin_script(operand.text) and (stdin is None or stdin.kind == "file"):
        return Outcome(_FROM_FD)  # sh /dev/fd/3 3<&0
    if operand is not None and not from_stdin and not stdin_script(operand.text) \
            and not dev_fd(operand.text):
        return Outcome(script_operand_note(operand, stdin), (FileUse(operand, "read"),))
    return _climbing(operand, stdin_shell(stdin))


def _climbing(operand: Word | None, outcome: Outcome) -> Outcome:
    """A script operand such as ``../../dev/stdin`` is a descriptor read from a shallow
    directory and a file from a deep one: both readings (a file read, and dynamic)."""
    if operand is None or operand.text[:1] == "/" or operand.text == "-":
        return outcome
    return Outcome(outcome.note or _CLIMBS, (*outcome.effects, FileUse(operand, "read")))


def not_sh_shell(words: list[Word], stdin: Stdin | None) -> Outcome:
    """fish, csh or tcsh (``NOT_SH_SHELLS``): their code is parsed as sh so that deny
    rules see what it may run, but sh is not their language (fish's ``true; and rm x``
    is no ``and`` command): a command running such code is never modelled."""
    name = words[0].text.rsplit("/", 1)[-1]
    outcome = _fish(words, stdin) if name == "fish" else shell(words, stdin)
    if outcome.note is None and any(isinstance(e, Script | Parse) for e in outcome.effects):
        return outcome._replace(note=f"runs {name} code, which is not sh: it is not modelled")
    return outcome


def _fish(words: list[Word], stdin: Stdin | None) -> Outcome:
    """fish(1)'s options: code given inline (``-c``, ``-C``/``--init-command``, also as
    ``--command=CODE`` or in a cluster ``-ic CODE``), files it writes (``-o``, ``-p``),
    then a script operand or stdin."""
    effects: list[Effect] = []

    def took(option: str, value: Word) -> None:
        if option in FISH_CODE_OPTS:
            effects.append(Script(value))
        elif option in FISH_WRITE_OPTS:
            effects.append(FileUse(value, "edit"))

    i = 1
    while i < len(words):
        text = words[i].text
        if text == "--" or len(text) < 2 or text[0] != "-":
            i += text == "--"
            break
        if text.startswith("--"):
            option, equals, value = text.partition("=")
            if equals:
                took(option, words[i]._replace(text=value))
            elif option in FISH_VALUE_OPTS and i + 1 < len(words):
                took(option, words[i + 1])
                i += 1
            i += 1
            continue
        for at, letter in enumerate(text[1:], 1):   # a cluster: -ic CODE, -cCODE
            if f"-{letter}" in FISH_VALUE_OPTS:
                rest = text[at + 1:]
                if rest:
                    took(f"-{letter}", words[i]._replace(text=rest))
                elif i + 1 < len(words):
                    took(f"-{letter}", words[i + 1])
                    i += 1
                break
        i += 1
    if any(isinstance(effect, Script) for effect in effects):
        return Outcome(None, tuple(effects))
    operand = words[i] if i < len(words) else None
    if operand is not None:
        return Outcome(script_operand_note(operand, stdin),
                       (*effects, FileUse(operand, "read")))
    stdin_outcome = stdin_shell(stdin)
    return stdin_outcome._replace(effects=(*effects, *stdin_outcome.effects))


def stdin_shell(stdin: Stdin | None) -> Outcome:
    """A shell reads its script from ``stdin``: a heredoc/here-string body is parsed; a
    pipe, a descriptor, a non-static string or an input an enclosing construct supplies
    is unknowable (the note says why; a static text found there is parsed all the same,
    so deny rules see it)."""
    if stdin is not None and stdin.kind in ("heredoc", "herestring"):
        parsed = (Parse(stdin.script),) if stdin.script else ()
        return Outcome(stdin_note(stdin), parsed)
    if stdin is not None and stdin.kind == "pipe":
        return Outcome(_FROM_PIPE)
    return Outcome(stdin_note(stdin))


def source(words: list[Word], stdin: Stdin | None) -> Outcome:
    """``source FILE`` / ``. FILE``: a script on stdin (or a descriptor given a heredoc)
    is read like a shell reads it; only a plain file path is modelled."""
    script = words[1]
    if script.procsub:
        return Outcome("runs a script read from a process substitution")
    if dev_fd(script.text) and not stdin_script(script.text) and (
            stdin is None or stdin.kind not in ("heredoc", "herestring")):
        return Outcome(_FROM_FD)
    if stdin_script(script.text) or dev_fd(script.text):
        return _climbing(script, stdin_shell(stdin))
    return Outcome(script_operand_note(script, stdin))


def crontab(words: list[Word], stdin: Stdin | None) -> Outcome:
    """``crontab`` installing a table from stdin (no operand, or ``-``): each entry's
    command runs later, as the user (crontab(5): five time fields or an ``@`` nickname,
    then the command, run by sh). A static heredoc or here-string is parsed so the rules
    see its commands; any other stdin is unknowable. Listing, editing, removing (``-l
    -e -r``) and a file operand (a ``read`` of it) are left as they are."""
    rest = [w.text for w in words[1:] if w.text[:1] != "-" or w.text == "-"]
    if rest not in ([], ["-"]) or any(w.text in ("-l", "-e", "-r", "-i") for w in words[1:]):
        return Outcome()
    if stdin is None or stdin.kind not in ("heredoc", "herestring") or stdin.dynamic \
            or stdin.script is None:
        return Outcome("installs commands to run later, read from an input not shown")
    commands = []
    for line in stdin.script.splitlines():
        fields = line.split(None, 1 if line.lstrip()[:1] == "@" else 5)
        if line.lstrip()[:1] not in ("", "#") and "=" not in fields[0] and len(fields) > 1:
            commands.append(fields[-1].replace("%", "\n", 1).partition("\n")[0])
    return Outcome("installs commands to run later", (Parse("\n".join(commands)),))


def interpreter(words: list[Word], stdin: Stdin | None) -> Outcome:
    """``python``/``node``/... reading their program from a pipe are unknowable."""
    family = words[0].text.rstrip("0123456789.")
    inline = INLINE_CODE_BY_FAMILY.get(family, INLINE_CODE_OPTS)
    i = 1
    while i < len(words):
        text = words[i].text
        if len(text) > 1 and text[0] == "-":
            if text in inline or (text[1] != "-" and text[:2] in inline):
                return Outcome()
            i += 2 if text in INTERPRETER_VALUE_OPTS else 1
            continue
        if family in ("deno", "bun") and text in INTERPRETER_SUBCOMMANDS:
            i += 1
            continue
        if family in ("deno", "bun") and text == "eval":
            return Outcome()
        return Outcome(script_operand_note(words[i], stdin))
    return Outcome(stdin_note(stdin))


def eval_builtin(name: str, words: list[Word]) -> Outcome:
    """``let``, ``read``, ``printf -v``, ``mapfile``, ``test`` ...: quoted text with
    ``$(``/`` ` ``/``${`` is evaluated (subscripts, arithmetic); ``-C CALLBACK`` runs
    code; assigning a risky variable by name (``read PATH``) is sensitive."""
    effects: list[Effect] = []
    args = words[1:]
    if name == "printf":  # only the -v NAME operand is evaluated and assigned
        args = [w._replace(text=w.text[2:]) for w in args[:1] if w.text.startswith("-v")
                and len(w.text) > 2] or (args[1:2] if args[:1] and args[0].text == "-v"
                                         else [])
    elif name in ("mapfile", "readarray", "compgen", "complete"):
        for i, word in enumerate(args):
            if word.text in CALLBACK_OPTS and i + 1 < len(args):
                effects += [Sensitive(word.text), Script(args[i + 1])]
    elif name == "hash" and any(w.text.startswith("-") and "p" in w.text for w in args):
        effects.append(Sensitive("-p"))  # hash -p /tmp/evil git: `git` now runs /tmp/evil
    if name in ("printf", "read", "mapfile", "readarray", "let", "wait"):
        effects += [Sensitive(var) for w in args
                    if risky_env(var := w.text.partition("=")[0])]
    scripts = [Script(w) for w in evaluated(args)]
    return Outcome(EVALUATES if scripts else None, (*effects, *scripts))


def code_builtin(name: str, args: list[Word]) -> Outcome:
    """``eval ARGS``, ``alias n=CODE`` and ``trap CODE SIG`` run shell code later."""
    args = args[1:] if args and args[0].text == "--" else args
    if name == "eval" and args:
        # `eval eval ls` is `eval ls` when no word holds anything a second parse would
        # read differently (quotes, escapes, expansions, operators): one parse, not one
        # per eval
        if args[0].text == "eval" and all(re.fullmatch(r"[\w./=:,+@%-]+", w.text)
                                          for w in args):
            args = args[next((i for i, w in enumerate(args) if w.text != "eval"),
                             len(args) - 1):]
        return Outcome(None, (Script(joined(args)),))
    if name == "alias":
        return Outcome(None, tuple(Script(w._replace(text=w.text.split("=", 1)[1]))
                                   for w in args if "=" in w.text))
    if name == "trap" and len(args) >= 2 and args[0].text not in ("", "-", "-p", "-l"):
        return Outcome(None, (Script(args[0]),))
    return Outcome()


def descriptor(path: str) -> int | None:
    """The descriptor a path opens (``/dev/fd/N``, ``/proc/self/fd/N``, ``/dev/stdin`` and
    their other spellings), else None. A relative path (or one under ``~``) that climbs
    with ``..`` may reach the root from wherever it is read: every reading, it is one too
    (``../../../dev/stdin``)."""
    if "dev" not in path and "proc" not in path:
        return None
    tilde = path[:2] == "~/"
    normal = posixpath.normpath(path[2:] if tilde else path)
    climbed = normal.startswith("../") or normal == ".."
    if path[:1] != "/" and not tilde and not climbed:
        return None  # dev/stdin in the working directory: a file
    if tilde and not climbed:
        return None
    m = re.fullmatch(_DEV_FD, re.sub(r"^(?:\.\./|/)+", "", normal))
    if m is None:
        return None
    return 0 if m.group(2) else int(m.group(1) or m.group(3))


def dev_fd(path: str) -> bool:
    """An open file descriptor as a path (:func:`descriptor`), not a file."""
    return descriptor(path) is not None


def stdin_script(path: str) -> bool:
    """A script operand read from standard input: ``-``, ``/dev/stdin``, ``/dev/fd/0``,
    ``/proc/self/fd/0`` and their other spellings."""
    return path == "-" or descriptor(path) == 0


def versioned_interpreter(name: str) -> bool:
    """An interpreter's versioned name: python3.12, pypy3.10, perl5.36, lua5.4, ruby3.2."""
    return name.startswith(INTERPRETER_FAMILIES) and re.fullmatch(_VERSIONED, name) is not None


def script_operand_note(word: Word, stdin: Stdin | None) -> str | None:
    """Why a script named by ``word`` cannot be known (None when it can be)."""
    if word.procsub:
        return "runs a script read from a process substitution"
    return stdin_note(stdin) if stdin_script(word.text) else None


def stdin_note(stdin: Stdin | None) -> str | None:
    if stdin is None or not stdin.dynamic:
        return None
    return _FROM_PIPE if stdin.kind in ("pipe", "herestring") and stdin.script is None \
        or stdin.kind == "pipe" else _INHERITED


# command names re-pointed --------------------------------------------------------
#: The builtins that re-point command names (judge asks this before :func:`renames`).
RENAMING = frozenset({"hash", "alias", "enable"})
#: What a re-pointed name now runs: its words, or None when that cannot be known.
Rename = tuple[str, tuple[str, ...] | None]
ANY_NAME = "*"  # a rename whose name cannot be known: every command may be re-pointed


def renames(name: str, args: list[Word]) -> list[Rename]:
    """Command names this builtin re-points (bash(1) "SHELL BUILTIN COMMANDS"):
    ``hash -p PATH NAME`` (NAME runs PATH), ``alias NAME=VALUE`` (NAME expands to VALUE
    once ``expand_aliases`` is on), ``enable -n NAME``/``-d NAME`` (NAME is no longer the
    builtin), ``enable -f FILE NAME`` (NAME is loaded from FILE: anything)."""
    if name not in RENAMING:
        return []
    texts = [w.text for w in args]
    if name == "hash":
        path = _option_value(texts, "p")
        if path is None:
            return []
        return [(t, (path.rpartition("/")[2],)) for t in _operands(texts, "p")]
    if name == "alias":
        return [(key, tuple(value.split()) or None)
                for key, _, value in (t.partition("=") for t in texts if "=" in t)]
    if name == "enable" and any(t[:1] == "-" and set(t[1:]) & set("fnd") for t in texts):
        return [(t, None) for t in _operands(texts, "f")] or [(ANY_NAME, None)]
    return []


def table_renames(words: Sequence[str]) -> list[Rename]:
    """``BASH_CMDS[ls]=/bin/rm`` -> ``("ls", ("rm",))``. Any other assignment to bash's
    command tables (``declare -A BASH_CMDS=(..)``, ``printf -v 'BASH_CMDS[ls]' %s
    /bin/rm``, ``read -a BASH_CMDS``) may re-point any name, to any program it names."""
    found: list[Rename] = []
    for text in words:
        m = re.fullmatch(r"(BASH_CMDS|BASH_ALIASES)\[([^]$`]*)\]\+?=([^$`]*)", text, re.DOTALL) \
            or re.fullmatch(r"\$\{(BASH_CMDS|BASH_ALIASES)\[([^]$`]*)\]:?=([^$`}]*)\}", text,
                            re.DOTALL)  # ${BASH_CMDS[ls]:=/bin/rm}: assigned when unset
        if m is not None:
            key = re.sub(r"[\\'\"]", "", m.group(2))
            value = m.group(3).rpartition("/")[2] if m.group(1) == "BASH_CMDS" else m.group(3)
            found.append((key, tuple(value.split()) or None))
    if found:
        return found
    programs = dict.fromkeys(m.group(1) for text in words
                             for m in re.finditer(r"/([\w.+-]+)(?=[\s)}'\"]|$)", text))
    return [(ANY_NAME, None), *((ANY_NAME, (p,)) for p in list(programs)[:4])]


def _option_value(texts: list[str], letter: str) -> str | None:
    """The value of option ``-LETTER`` in a cluster (``-tp PATH``) or attached."""
    for i, text in enumerate(texts):
        if text == "--":
            return None
        if text[:1] == "-" and letter in text[1:]:
            rest = text[text.index(letter, 1) + 1:]
            return rest or (texts[i + 1] if i + 1 < len(texts) else None)
    return None


def _operands(texts: list[str], valued: str) -> list[str]:
    """The words after the options (a cluster ending in one of ``valued`` takes the next
    word as its value)."""
    i = 0
    while i < len(texts) and texts[i][:1] == "-" and texts[i] != "-":
        if texts[i] == "--":
            return texts[i + 1:]
        i += 2 if texts[i][-1] in valued and len(texts[i]) > 1 else 1
    return texts[i:]


def inline_code(words: list[Word]) -> str | None:
    """The program an interpreter is given inline (``python3 -c CODE``, ``perl -e CODE``,
    ``node -e CODE``; attached: ``-cCODE``), when static; else None."""
    family = words[0].text.rstrip("0123456789.")
    inline = INLINE_CODE_BY_FAMILY.get(family, INLINE_CODE_OPTS) - {"-m"}
    for i, word in enumerate(words[1:], 1):
        text = word.text
        if text in inline and i + 1 < len(words):
            code = words[i + 1]
        elif text[:2] in inline and len(text) > 2 and text[1] != "-":
            code = word._replace(text=text[2:])
        else:
            continue
        return None if code.expand else code.text
    return None


@cache
def _shelled() -> re.Pattern[str]:
    """A string another language hands to a shell or runs as a program: a call of
    system/popen/exec/subprocess/child_process/shell_exec/passthru ... with a string or a
    list of strings, or backticks, ``%x(..)``, ``qx(..)``."""
    call = (r"\b(?:system|popen|shell_exec|passthru|exec|execute|execSync|execFileSync|execFile"
            r"|spawn|spawnSync|getoutput|getstatusoutput|check_output|check_call|call|run"
            r"|Popen|proc_open)\s*\(?\s*")
    return re.compile(call + r"(?:\[([^\]]*)\]|(['\"])((?:\\.|(?!\2).)*)\2)"
                      r"|`([^`]+)`|%x[({\[](.*?)[)}\]]|\bqx[({\[/](.*?)[)}\]/]", re.S)


def embedded_commands(words: list[Word], stdin: Stdin | None) -> list[str]:
    """Shell commands an interpreter's inline code (or a static heredoc or here-string it
    reads) visibly runs (``python3 -c 'os.system("rm -rf x")'``, ``node -e 'execSync("rm
    x")'``, ``perl -e '`rm x`'``): a reading for the deny rules only (the code is another
    language, never allowed by reading it). At most 8."""
    code = inline_code(words)
    if code is None and stdin is not None and stdin.kind in ("heredoc", "herestring") \
            and not stdin.dynamic:
        code = stdin.script
    if not code:
        return []
    found: list[str] = []
    for m in _shelled().finditer(code):
        listed, quoted, backticked = m.group(1), m.group(3), m.group(4) or m.group(5) or m.group(6)
        if listed is not None:  # subprocess.run(["rm", "-rf", "x"])
            found.append(" ".join(re.findall(r"['\"]((?:\\.|[^'\"])*)['\"]", listed)))
        else:
            found.append(quoted if quoted is not None else backticked or "")
        if len(found) >= 8:
            break
    return [f for f in found if f.strip()]
