"""Shell commands to what they run and touch: the command half of :mod:`dm_cc.permissions.shell`.

:class:`Analyser` receives each simple command as words from the tree walk
(:mod:`shell_words`) and records :class:`SimpleCommand` s and :class:`FileRef` s.

* **Emitting a command** (:meth:`Analyser.emit`) works on words only: reduce the command
  name to its basename, drop git's global options, then either parse a script again
  (``bash -c``, ``eval``, ``ssh host CMD``, a heredoc fed to a shell), unwrap a wrapper
  (``sudo``, ``timeout``, ``uv run`` ... -- both wrapper and inner command are emitted) and
  read the arguments with the program's :class:`~shell_tables.ArgSpec` (risky options become
  ``sensitive`` tokens; file operands become FileRefs; sed and awk programs are checked by
  :mod:`shell_sed_awk`). Shells, interpreters and code-running builtins are handled by the
  :mod:`shell_builtins` mixin, argument specs by the :mod:`shell_arguments` mixin. The
  program knowledge lives in :mod:`shell_tables`; these modules are the generic machinery.
* **Conservative by construction**: a command whose name or arguments cannot be known
  statically, a parse error, too deep nesting or a script read from a pipe yields
  ``dynamic=True``, which no rule may allow. Nesting (wrappers and re-parsed scripts) is
  capped at ``MAX_DEPTH`` and re-parsed text at a budget proportional to the input, so the
  work stays linear in practice.
* ``cd DIR`` is followed loosely: later relative paths are reported both as written and
  under DIR, so ``cd ~/.ssh && cat id_rsa`` still names ``~/.ssh/id_rsa``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from dm_cc.permissions.shell import tables
from dm_cc.permissions.shell.arguments import ASSIGNMENT, ArgumentInspection
from dm_cc.permissions.shell.flags import scan_options
from dm_cc.permissions.shell.programs import (
    DEV_FD,
    INTERPRETER,
    STDIN_SCRIPTS,
    BuiltinHandling,
    script_operand_note,
)
from dm_cc.permissions.shell.quoting import Word, joined
from dm_cc.permissions.shell.source import join_continuations, syntax_tree
from dm_cc.permissions.shell.walk import SHOWN, Stdin, Walk, risky_env

MAX_DEPTH = 8  # wrappers plus re-parsed scripts


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command the line runs. ``text`` is what bash rules are matched against."""

    words: tuple[str, ...]
    dynamic: bool = False
    sensitive: tuple[str, ...] = ()
    note: str | None = None
    # A guess that an unknown program runs its arguments as a command (`fakeroot rm
    # -rf x`): only a deny decides it; anything else leaves the line as it was.
    speculative: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True, slots=True)
class FileRef:
    """A file the line reads or writes, unquoted as written (``~`` is not expanded)."""

    path: str
    access: Literal["read", "edit"]
    dynamic: bool = False


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    """Everything :func:`~dm_cc.permissions.shell.analyse` found, each item once, in order."""

    commands: tuple[SimpleCommand, ...]
    files: tuple[FileRef, ...]
    # Guessed inner commands of unknown programs (`fakeroot rm -rf x` → `rm -rf x`):
    # judged by deny rules only.
    speculative: tuple[SimpleCommand, ...] = ()


#: Wrappers that start a shell reading its script from stdin when given no command
#: (``sudo -s <<< CMD``, ``su - root <<EOF``, ``ssh host <<< CMD``, ``script -q /dev/null``).
_STDIN_SHELL_WRAPPERS = frozenset({"sudo", "doas", "su", "runuser", "ssh", "script", "run0",
                                   "pkexec", "machinectl", "sg", "newgrp"})


_V = TypeVar("_V")


def lookup(table: Mapping[tuple[str, ...], _V], texts: Sequence[str]
           ) -> tuple[tuple[str, ...], _V | None]:
    """The entry for the longest (up to 3) leading words of ``texts`` in ``table``."""
    for size in (3, 2, 1):
        key = tuple(texts[:size])
        if len(key) == size and key in table:
            return key, table[key]
    return (), None


_LOOSE_KEYS: dict[str, list[tuple[str, ...]]] = {}
for _key in tables.WRAPPERS:
    if len(_key) > 1:
        _LOOSE_KEYS.setdefault(_key[0], []).append(_key)
_LOOSE_SPAN = 6  # option words (and values) tolerated before each subcommand word


_RANGES = tuple(tuple(range(n)) for n in range(4))


def wrapper_lookup(texts: Sequence[str]) -> tuple[tuple[str, ...], tables.Wrapper | None,
                                                   Sequence[int]]:
    """The wrapper for ``texts`` and the indices of its key words.

    Global options may sit between the program and its subcommand words (``kubectl -n prod
    exec``, ``uv -q run``, ``docker compose -f f.yml exec``): option words, and a possible
    value after each, are skipped. A false match only adds a request, so this errs wide.
    """
    key, spec = lookup(tables.WRAPPERS, texts)
    if not texts or texts[0] not in _LOOSE_KEYS or not any(t[:1] == "-" for t in texts[1:3]):
        return key, spec, _RANGES[len(key)]
    best: tuple[tuple[str, ...], Sequence[int]] = (key, _RANGES[len(key)])
    for candidate in _LOOSE_KEYS[texts[0]]:
        if len(candidate) <= len(best[0]):
            continue
        found, pos = [0], 1
        for part in candidate[1:]:
            j = pos
            while j < len(texts) and j < pos + _LOOSE_SPAN:
                t = texts[j]
                if t == part:
                    break
                option = len(t) > 1 and t[0] == "-" and t != "--"
                value = j > pos and texts[j - 1][:1] == "-" and "=" not in texts[j - 1]
                if not (option or value):
                    j = len(texts)
                    break
                j += 1
            if j >= len(texts) or texts[j] != part:
                break
            found.append(j)
            pos = j + 1
        else:
            best = (candidate, found)
    if best[0] == key:
        return key, spec, best[1]
    return best[0], tables.WRAPPERS[best[0]], best[1]


# --------------------------------------------------------------------------- analyser
class Analyser(BuiltinHandling, ArgumentInspection):
    """Collects commands and files; knows programs (through the tables), not trees."""

    def __init__(self, size: int) -> None:
        self.commands: list[SimpleCommand | None] = []
        self.files: list[FileRef] = []
        self.speculative: list[SimpleCommand] = []
        self.budget = 2 * size + 65_536  # characters that may be (re-)parsed in total
        self.suspect: list[str] = []  # why commands being emitted now cannot be trusted
        self.cwd: tuple[str, bool] | None = None  # directory from `cd`, and whether unknown
        self.links: set[str] = set()  # symlinks this line creates (`ln -s ~ h`)

    def result(self) -> ShellAnalysis:
        commands = (c for c in self.commands if c is not None)
        return ShellAnalysis(tuple(dict.fromkeys(commands)), tuple(dict.fromkeys(self.files)),
                             tuple(dict.fromkeys(self.speculative)))

    def record(self, words: Sequence[str], dynamic: bool, sensitive: Sequence[str] = (),
               note: str | None = None, slot: int | None = None) -> None:
        """Store one SimpleCommand (in a reserved ``slot`` when given)."""
        tokens = tuple(dict.fromkeys(sensitive))
        if self.suspect and not dynamic:
            dynamic, note = True, note or self.suspect[-1]
        if tokens and note is None:
            note = f"uses {', '.join(tokens)}"
        command = SimpleCommand(tuple(words), dynamic, tokens, note)
        if slot is None:
            self.commands.append(command)
        else:
            self.commands[slot] = command

    def dynamic(self, text: str, note: str) -> None:
        self.record((" ".join(text.split())[:SHOWN],), True, note=note)

    def add(self, words: Sequence[Word], sensitive: Sequence[str] = (),
            note: str | None = None, dynamic: bool = False) -> None:
        self.record([w.text for w in words], dynamic or any(w.expand for w in words),
                    sensitive, note)

    def file(self, word: Word, access: Literal["read", "edit"]) -> None:
        path = word.text
        if word.procsub or path in ("", "-", "{}") or path in tables.NON_FILES \
                or DEV_FD.fullmatch(path):
            return
        dynamic = word.expand or word.glob
        if path[:1] == "~" and path != "~" and path[:2] != "~/":
            dynamic = True  # ~+ ($PWD), ~- ($OLDPWD), ~user: only the running shell knows
        if any(path == link or path.startswith(link + "/") for link in self.links):
            dynamic = True  # through a symlink made earlier in this line: its target is unknown now
        self.files.append(FileRef(path, access, dynamic))
        if self.cwd is not None and not path.startswith(("/", "~")):
            base, unknown = self.cwd  # after `cd DIR` a relative path may mean DIR/path
            self.files.append(FileRef(f"{base.rstrip('/')}/{path}", access, dynamic or unknown))

    def parse(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH or len(text) > self.budget:
            self.dynamic(text, "nested too deeply to analyse")
            return
        self.budget -= len(text)
        text = join_continuations(text)  # bash deletes backslash-newline before anything
        src = text.encode("utf-8", "surrogatepass")
        root = syntax_tree(src)
        intact = Walk(self, src, depth).run(root)
        if root.has_error or not intact:
            self.dynamic(text, "the command could not be parsed")

    def script(self, word: Word, depth: int) -> None:
        """A string some command runs as shell code."""
        if word.expand or word.glob or word.procsub:
            self.record((word.text,), True, note="runs a script that is not static")
        elif "{}" in word.text:  # find -exec sh -c 'rm {}': the placeholder is filled later
            self.suspect.append("the script holds a {} placeholder filled in at run time")
            self.parse(word.text, depth)
            self.suspect.pop()
        else:
            self.parse(word.text, depth)

    # emitting ----------------------------------------------------------------
    def emit(self, words: list[Word], depth: int, stdin: Stdin | None = None,
             env: Sequence[tuple[str, Word]] = ()) -> None:
        """Record one command (and whatever it runs in turn)."""
        if not words:
            return
        if depth > MAX_DEPTH:
            self.dynamic(joined(words).text, "wrapped or nested too deeply to analyse")
            return
        head = words[0]
        if head.expand or head.glob or head.procsub:
            self.add(words, note="the command name is not static", dynamic=True)
            return
        if head.text in ("{", "}", "(", ")"):  # `coproc { cmd; }`, `time { cmd; }`: a group
            self.record([w.text for w in words], True,  # the parser read as plain words
                        note="a command group the parser did not understand")
            self.suspect.append("found in a command group the parser did not understand")
            self.emit(words[1:], depth + 1, stdin)
            self.suspect.pop()
            return
        name = head.text.rsplit("/", 1)[-1] or head.text
        words = [head._replace(text=name), *words[1:]]
        sensitive: list[str] = []
        if "/" in head.text and head.text.rsplit("/", 1)[0] not in tables.SYSTEM_BIN_DIRS:
            # `./git status` runs whatever ./git is: deny and ask rules match it as
            # `git`, but no allow rule for `git` may allow it (it asks each time).
            sensitive.append(head.text)
        if name == "git":
            places: list[Word] = []
            words = _git_globals(words, sensitive, places)
            for place in places:  # `git -C DIR`: what lies in DIR is read (and more)
                self.file(place, "read")
        if name == "coproc" and len(words) > 2 and words[2].text in ("{", "("):
            words = [words[0], *words[2:]]  # coproc NAME { cmd; }: NAME names the coprocess
        texts = [w.text for w in words]
        slot = len(self.commands)
        self.commands.append(None)  # keep the outer command before what it runs
        note, stop = None, len(words)
        key, wrapper, where = wrapper_lookup(texts)
        if wrapper is not None:  # global options between the key words are left out
            skipped = where[-1] + 1 - len(key)
            inner = [words[i] for i in where] + words[where[-1] + 1:]
            stop, note = self._unwrap(key, wrapper, inner, depth, stdin)
            stop += skipped
        elif name in tables.SHELLS:
            note = self._shell(words, depth, stdin)
        elif name in tables.INTERPRETERS or INTERPRETER.fullmatch(name):
            note = self._interpreter(words, stdin)
        elif name in ("source", ".") and len(words) > 1:
            if words[1].text in STDIN_SCRIPTS and not words[1].procsub:
                note = self._stdin_shell(stdin, depth)
            else:
                note = script_operand_note(words[1], stdin)
        elif name in ("eval", "alias", "trap"):
            self._builtin(name, words[1:], depth)
        elif name in ("cd", "pushd", "popd"):
            self._chdir(name, words[1:])
        elif name in tables.EVAL_BUILTINS:
            note = self._eval_builtin(name, words, depth, sensitive)
        if name in ("ln", "cp") and _makes_symlink(texts):
            names = [t for t in texts[1:] if t != "--" and not t.startswith("-")]
            if names:
                self.links.add(names[-1].rstrip("/") or names[-1])
        spec_key, spec = lookup(tables.ARG_SPECS, texts)
        if spec is not None:
            self._inspect(spec_key, spec, words, stop, depth, sensitive)
        dynamic = note is not None or any(w.expand for w in words)
        if spec is None and wrapper is None and not dynamic and name not in tables.NOT_RUNNERS \
                and name not in tables.SHELLS and not INTERPRETER.fullmatch(name):
            self._speculate(texts)
        self.record(texts, dynamic, sensitive, note, slot)
        for var, word in env:
            self.record((word.text, *texts), dynamic or word.expand, (var,),
                        f"runs with {var} set")

    def _speculate(self, texts: Sequence[str]) -> None:
        """An unknown program may be a wrapper (`fakeroot rm -rf x`, `xvfb-run cmd`,
        `tool -- cmd`): offer what would be its inner command to the deny rules."""
        starts: list[int] = []
        if "--" in texts[1:]:
            starts.append(texts.index("--", 1) + 1)
        for i in range(1, len(texts)):
            if len(starts) >= 3:
                break
            if not texts[i].startswith("-") and _PLAUSIBLE_COMMAND.fullmatch(texts[i]):
                starts.append(i)
                if i > 1 and texts[i - 1].startswith("-") and "=" not in texts[i - 1]:
                    continue  # it may be that option's value: try the next word too
                break
        for start in dict.fromkeys(starts):
            if start < len(texts):
                rest = tuple(texts[start:])
                self.speculative.append(SimpleCommand(rest, speculative=True,
                                                      note=f"{texts[0]} may run it"))

    def _unwrap(self, key: tuple[str, ...], spec: tables.Wrapper, words: list[Word],
                depth: int, stdin: Stdin | None) -> tuple[int, str | None]:
        """Emit what a wrapper runs; return where the wrapper's own words end (and a note
        when what it runs cannot be known)."""
        stop, ran = self._unwrap_inner(key, spec, words, depth, stdin)
        if not ran and len(key) == 1 and key[0] in _STDIN_SHELL_WRAPPERS:
            return stop, self._stdin_shell(stdin, depth)  # sudo -s <<< CMD: a shell on stdin
        return stop, None

    def _unwrap_inner(self, key: tuple[str, ...], spec: tables.Wrapper, words: list[Word],
                      depth: int, stdin: Stdin | None) -> tuple[int, bool]:
        base = len(key)
        args = words[base:]
        texts = [w.text for w in args]
        scan = scan_options(texts, value_opts=spec.value_opts | spec.string_opts,
                            pair_opts=spec.pair_opts, optional_opts=spec.optional_opts,
                            stop_opts=spec.command_opts, stop_at_positional=spec.rest != "none",
                            lone_dash_option=spec.lone_dash)
        flags = {o.flag for o in scan.options}
        ran = False
        for opt in scan.options:
            if opt.flag in spec.string_opts and opt.value is not None:
                self.script(args[opt.index]._replace(text=opt.value), depth + 1)
                ran = True
        end = scan.end
        if flags & spec.query_opts:
            return base + end, True
        if flags & spec.command_opts:
            self.emit(args[end:], depth + 1, stdin)
            return base + end, True
        if spec.rest == "none":
            if flags & spec.command_flags:  # runuser -u USER [--] CMD
                first = texts.index("--") + 1 if "--" in texts else (scan.positionals or [end])[0]
                self.emit(args[first:], depth + 1, stdin)
                ran = ran or first < len(args)
            return base + end, ran
        after_dashdash = end > 0 and texts[end - 1] == "--"
        env: list[tuple[str, Word]] = []
        for opt in scan.options:  # systemd-run -E NAME=VALUE, run0 --setenv=NAME=VALUE
            if opt.flag in spec.env_opts and opt.value is not None:
                var = opt.value.split("=", 1)[0]
                if risky_env(var):
                    env.append((var, args[opt.index]._replace(text=opt.value)))
        start = end
        while spec.assignments and start < len(args) and ASSIGNMENT.match(args[start].text):
            var, _, value = args[start].text.partition("=")
            if risky_env(var):
                env.append((var, args[start]))
            if var.startswith("BASH_FUNC_"):  # an exported function: its body runs later
                self.script(args[start]._replace(text="f" + value), depth + 1)
            start += 1
        start += spec.positionals
        while spec.reopts and start < len(args):  # ssh host -t -p 22 CMD
            text = args[start].text
            if text == "--":
                start += 1
                break
            if len(text) < 2 or text[0] != "-":
                break
            start += 2 if text in spec.value_opts else 1
        rest = args[start:]
        if len(rest) >= 2 and rest[0].text in spec.string_opts:  # flock FILE -c CMD
            self.script(rest[1], depth + 1)
            return base + end, True
        mode = "command" if flags & spec.command_flags else spec.rest
        if mode == "dashdash" and not after_dashdash and "--" in texts[end:]:
            rest = args[texts.index("--", end) + 1:]
        cut = next((i for i, w in enumerate(rest) if w.text in spec.stop_words), len(rest))
        rest = rest[:cut]
        ran = ran or bool(rest)
        chdir = [o for o in scan.options if o.flag in spec.chdir_opts and o.value is not None]
        if mode in ("command", "dashdash") and chdir:  # env -C DIR CMD: CMD runs in DIR
            outer, self.cwd = self.cwd, None
            self._chdir("cd", [args[chdir[-1].index]._replace(text=chdir[-1].value)])
            self.emit(rest, depth + 1, stdin, env)
            self.cwd = outer
        elif mode in ("command", "dashdash"):
            self.emit(rest, depth + 1, stdin, env)
        elif mode == "script" and rest:
            self.script(joined(rest), depth + 1)
        elif mode == "scripts":
            for word in rest:
                self.script(word, depth + 1)
        return base + end, ran


def _makes_symlink(texts: Sequence[str]) -> bool:
    """``ln -s``/``ln --symbolic``/``cp -s`` (in any option cluster)."""
    return any(t in ("--symbolic", "--symbolic-link") or
               (t.startswith("-") and not t.startswith("--") and "s" in t[1:]) for t in texts[1:])


_PLAUSIBLE_COMMAND = re.compile(r"[A-Za-z_][\w.+-]*")


# --------------------------------------------------------------------------- helpers
def _git_globals(words: list[Word], sensitive: list[str], places: list[Word]) -> list[Word]:
    """``git -C d -c k=v --no-pager push`` → ``git push``; -c/--exec-path are sensitive;
    the directories named by -C/--git-dir/--work-tree go to ``places``."""
    i = 1
    while i < len(words) and len(words[i].text) > 1 and words[i].text[0] == "-":
        name, eq, value = words[i].text.partition("=")
        if name in tables.GIT_GLOBAL_SENSITIVE:
            sensitive.append(name)
        takes_value = name in tables.GIT_GLOBAL_VALUE and not eq
        if name in tables.GIT_GLOBAL_PLACES:
            if eq:
                places.append(words[i]._replace(text=value))
            elif i + 1 < len(words):
                places.append(words[i + 1])
        i += 2 if takes_value else 1
    return [words[0], *words[i:]]
