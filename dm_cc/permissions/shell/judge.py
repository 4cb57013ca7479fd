"""Records to judgement: the last stage of :mod:`dm_cc.permissions.shell`.

:meth:`Judge.run` keeps a worklist of scripts: a stack of iterators, one per script being
judged. Each script is parsed (:mod:`.source`), walked (:mod:`.walk`) and its records judged
in order; a script found on the way (``bash -c '..'``, ``eval``, a heredoc fed to a shell,
``find -exec sh -c``, backticks in a heredoc body) is pushed on the stack with its context
(nesting depth, why its commands cannot be trusted) and judged in full before the record
that found it resumes. So the order is depth-first, as bash runs it: the outer command is
reported before what it runs, and a nested script's commands before the outer script's
next command -- which is also what ``cd`` and symlink tracking need.

* **A command** (:meth:`Judge.command`) is judged on its words: the command name reduced
  to its basename, git's global options dropped, then the program modules say what it
  does -- :mod:`.wrappers` (``sudo``, ``timeout``, ``uv run`` ...: both wrapper and inner
  command are reported), :mod:`.programs` (shells, interpreters, ``eval`` ...) and
  :mod:`.arguments` (a program's :class:`~.tables.ArgSpec`: risky options become
  ``sensitive`` tokens, file operands FileRefs). Their outcomes are plain data; the judge
  applies them. The program knowledge lives in :mod:`.tables`.
* **Conservative by construction**: a command whose name or arguments cannot be known
  statically, a parse error, too deep nesting or a script read from a pipe yields
  ``dynamic=True``, which no rule may allow. Nesting (wrappers and re-parsed scripts) is
  capped at ``MAX_DEPTH`` and re-parsed text at a budget proportional to the input, so the
  work stays linear in practice.
* ``cd DIR`` is followed loosely: later relative paths are reported both as written and
  under DIR, so ``cd ~/.ssh && cat id_rsa`` still names ``~/.ssh/id_rsa``.
"""

# No `from __future__ import annotations` here: NamedTuple classes build about twice as
# fast with evaluated annotations, and this module is imported at start-up.

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import Any, NamedTuple

from dm_cc.permissions.shell.arguments import inspect
from dm_cc.permissions.shell.programs import (
    code_builtin,
    dev_fd,
    eval_builtin,
    interpreter,
    shell,
    source,
    versioned_interpreter,
)
from dm_cc.permissions.shell.quoting import Word, is_assignment, joined
from dm_cc.permissions.shell.records import (
    Access,
    Broken,
    Command,
    Deferred,
    Effect,
    FileUse,
    Noted,
    Opaque,
    Outcome,
    Parse,
    Script,
    Sensitive,
    Stdin,
)
from dm_cc.permissions.shell.results import FileRef, ShellAnalysis, SimpleCommand
from dm_cc.permissions.shell.source import join_continuations, syntax_tree
from dm_cc.permissions.shell.tables import lookup
from dm_cc.permissions.shell.tables.arguments import ARG_SPECS
from dm_cc.permissions.shell.tables.commands import (
    GIT_GLOBAL_PLACES,
    GIT_GLOBAL_SENSITIVE,
    GIT_GLOBAL_VALUE,
    NON_FILES,
    NOT_RUNNERS,
    SYSTEM_BIN_DIRS,
)
from dm_cc.permissions.shell.tables.interpreters import EVAL_BUILTINS, INTERPRETERS, SHELLS
from dm_cc.permissions.shell.walk import SHOWN, walk
from dm_cc.permissions.shell.wrappers import unwrap, wrapper_lookup

MAX_DEPTH = 8  # wrappers plus re-parsed scripts
_GROUP = "found in a command group the parser did not understand"
_DEFERRED = "stored as a value and evaluated later as code"
_PLACEHOLDER = "the script holds a {} placeholder filled in at run time"
_NOTHING = Outcome()
# bash(1) "RESERVED WORDS": as the first word of a command they start a compound command
_RESERVED = frozenset({"!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
                       "function", "if", "in", "select", "then", "until", "while", "[[", "]]",
                       "time"}) - {"coproc", "time"}


# Paths and commands one line may name: beyond, the rest is not looked at and the line
# asks (a line built to multiply its requests -- CDPATH entries times `cd`s times
# operands -- must not cost the person more than a line that names this many).
MAX_REFERENCES = 4_096


class Nested(NamedTuple):
    """A script to parse and judge before going on: the worklist's unit."""

    text: str
    depth: int
    suspect: str | None  # why its commands cannot be trusted (None: they can be)


class Judge:
    """Collects commands and files; knows programs (through the tables), not trees."""

    def __init__(self, size: int) -> None:
        self.commands: list[SimpleCommand | None] = []
        self.files: list[FileRef] = []
        self.speculative: list[SimpleCommand] = []
        self.budget = 2 * size + 65_536  # characters that may be (re-)parsed in total
        self.cwd: tuple[str, bool] | None = None  # directory from `cd`, and whether unknown
        self.cdpath: list[Word] = []  # CDPATH set in this line: where `cd DIR` may lead
        self.elsewhere: list[tuple[str, bool]] = []  # more places the last `cd` may have led
        self.links: dict[str, str | None] = {}  # symlinks this line makes -> their target
        # deferred evaluation: the first value stored that may hold code, and the first
        # place that evaluates a stored value (both in one line: the line is dynamic)
        self.deferred: dict[bool, str] = {}
        self.stored_code: list[str] = []  # static stored values holding a substitution
        self.overflowed = False  # MAX_REFERENCES reached: the rest is not recorded

    def run(self, source: str) -> None:
        """Judge ``source`` and every script found in it, depth-first."""
        work: list[Iterator[Nested]] = [self.script_text(Nested(source, 0, None))]
        while work:
            nested = next(work[-1], None)
            if nested is None:
                work.pop()
            else:
                work.append(self.script_text(nested))
        if len(self.deferred) == 2:
            self.record((self.deferred[False],), True, None, note=(
                "evaluates as code a value this line sets or reads "
                f"({self.deferred[True][:60]})"))
            # `x='a[$(rm y)]'; (( x ))` runs `rm y`: judge the stored code as well
            work = [self.script_text(Nested(f": {code}", 1, _DEFERRED))
                    for code in self.stored_code]
            while work:
                nested = next(work[-1], None)
                if nested is None:
                    work.pop()
                else:
                    work.append(self.script_text(nested))

    def result(self) -> ShellAnalysis:
        commands = (c for c in self.commands if c is not None)
        return ShellAnalysis(tuple(dict.fromkeys(commands)), tuple(dict.fromkeys(self.files)),
                             tuple(dict.fromkeys(self.speculative)))

    # recording --------------------------------------------------------------
    def record(self, words: Sequence[str], dynamic: bool, suspect: str | None,
               sensitive: Sequence[str] = (), note: str | None = None,
               slot: int | None = None) -> None:
        """Store one SimpleCommand (in a reserved ``slot`` when given)."""
        tokens = tuple(dict.fromkeys(sensitive)) if sensitive else ()
        if suspect is not None and not dynamic:
            dynamic, note = True, note or suspect
        if tokens and note is None:
            note = f"uses {', '.join(tokens)}"
        command = SimpleCommand(tuple(words), dynamic, tokens, note)
        if slot is None:
            if self._full(self.commands):
                return
            self.commands.append(command)
        else:
            self.commands[slot] = command

    def dynamic(self, text: str, note: str) -> None:
        self.record((" ".join(text.split())[:SHOWN],), True, None, note=note)

    def _full(self, found: list[Any]) -> bool:
        """Whether ``found`` holds MAX_REFERENCES already; the first time, the line is
        made to ask (one command more, past the cap, that says why)."""
        if len(found) < MAX_REFERENCES:
            return False
        if not self.overflowed:
            self.overflowed = True
            self.commands.append(SimpleCommand(
                ("(the rest of the line)",), True, (),
                f"names more than {MAX_REFERENCES:,} paths or commands: too many to judge "
                "one by one"))
        return True

    def file(self, word: Word, access: Access) -> None:
        path = word.text
        if word.procsub or path in ("", "-", "{}") or path in NON_FILES or dev_fd(path):
            return
        dynamic = word.expand or word.glob
        if path[:1] == "~" and path != "~" and path[:2] != "~/":
            dynamic = True  # ~+ ($PWD), ~- ($OLDPWD), ~user: only the running shell knows
        for link, target in self.links.items():
            if path == link or path.startswith(link + "/"):
                dynamic = True  # through a symlink made earlier in this line: judged as
                if target is not None:  # written (not allowable) and through its target
                    self.files.append(FileRef(target + path[len(link):], access, False))
        if self._full(self.files):
            return
        self.files.append(FileRef(path, access, dynamic))
        if self.cwd is not None and not path.startswith(("/", "~")):
            for base, unknown in (self.cwd, *self.elsewhere):  # after `cd DIR`: DIR/path
                if self._full(self.files):
                    return
                self.files.append(FileRef(f"{base.rstrip('/')}/{path}", access,
                                          dynamic or unknown))

    def chdir(self, name: str, args: Sequence[Word]) -> None:
        """Track ``cd``: later relative paths are also reported under the new directory.
        (Subshells are not tracked, so both spellings are always reported.)"""
        target = next((w for w in args if not w.text.startswith("-") or w.text == "-"), None)
        if name == "popd" or (target is not None and target.text == "-"):
            self.cwd = ("$OLDPWD", True)
            return
        text = "~" if target is None else target.text
        unknown = target is not None and (target.expand or target.glob)
        self.elsewhere = []
        if self.cdpath and not text.startswith(("/", "~", "./", "../")) and text not in (".", ".."):
            # bash(1) CDPATH: `cd DIR` enters the first CDPATH entry holding DIR
            self.elsewhere = [(f"{entry.rstrip('/') or '/'}/{text}".replace("//", "/"),
                               unknown or word.expand or word.glob)
                              for word in self.cdpath for entry in word.text.split(":") if entry]
        if self.cwd is not None and not text.startswith(("/", "~")):
            text, unknown = f"{self.cwd[0].rstrip('/')}/{text}", unknown or self.cwd[1]
        self.cwd = (text, unknown)

    # scripts ----------------------------------------------------------------
    def script_text(self, nested: Nested) -> Iterator[Nested]:
        """Parse and judge one script; yield the scripts found in it, one at a time."""
        text, depth, suspect = nested
        if depth > MAX_DEPTH or len(text) > self.budget:
            self.dynamic(text, "nested too deeply to analyse")
            return
        self.budget -= len(text)
        text = join_continuations(text)  # bash deletes backslash-newline before anything
        src = text.encode("utf-8", "surrogatepass")
        for record in walk(src, syntax_tree(src)):
            if isinstance(record, Command):
                yield from self.command(record.words, depth, record.stdin, record.env,
                                        record.suspect or suspect)
            elif isinstance(record, FileUse):
                self.file(record.word, record.access)
            elif isinstance(record, Noted):
                if "CDPATH" in record.sensitive:  # export CDPATH=~: later `cd` may go there
                    self.cdpath += [w._replace(text=w.text.partition("=")[2])
                                    for w in record.words if w.text.startswith("CDPATH=")]
                self.record([w.text for w in record.words],
                            record.dynamic or any(w.expand for w in record.words),
                            record.suspect or suspect, record.sensitive, record.note)
            elif isinstance(record, Script):
                yield from self.script(record.word, depth + 1, record.suspect or suspect)
            elif isinstance(record, Deferred):
                self.deferred.setdefault(record.stores, record.text)
                if record.code is not None and len(self.stored_code) < 8:
                    self.stored_code.append(record.code)
            elif isinstance(record, Broken):
                self.dynamic(text, "the command could not be parsed")

    def script(self, word: Word, depth: int, suspect: str | None) -> Iterator[Nested]:
        """A string some command runs as shell code."""
        if word.expand or word.glob or word.procsub:
            self.record((word.text,), True, suspect, note="runs a script that is not static")
        elif "{}" in word.text:  # find -exec sh -c 'rm {}': the placeholder is filled later
            yield Nested(word.text, depth, _PLACEHOLDER)
        else:
            yield Nested(word.text, depth, suspect)

    # commands ---------------------------------------------------------------
    def command(self, words: list[Word], depth: int, stdin: Stdin | None = None,
                env: Iterable[tuple[str, Word]] = (), suspect: str | None = None,
                ) -> Iterator[Nested]:
        """Record one command (and whatever it runs in turn)."""
        if not words:
            return
        if depth > MAX_DEPTH:
            self.dynamic(joined(words).text, "wrapped or nested too deeply to analyse")
            return
        head = words[0]
        if head.expand or head.glob or head.procsub:
            self.record([w.text for w in words], True, suspect,
                        note="the command name is not static")
            return
        if head.text in _RESERVED or is_assignment(head.text):
            # `time for i in 1; do rm x; done`, `time x=1`: tree-sitter read a compound
            # command or an assignment as plain words; judge what follows the first word too
            self.record([w.text for w in words], True, suspect,
                        note="shell syntax the parser read as a command")
            yield from self.command(words[1:], depth + 1, stdin, suspect=_GROUP)
            return
        if head.text in ("{", "}", "(", ")"):  # `coproc { cmd; }`, `time { cmd; }`: a group
            self.record([w.text for w in words], True, suspect,  # the parser read as words
                        note="a command group the parser did not understand")
            yield from self.command(words[1:], depth + 1, stdin, suspect=_GROUP)
            return
        sensitive: list[str] = []
        opaque: list[str] = []  # why what it does is only known when it runs (Opaque)
        if "/" in head.text:
            folder, _, name = head.text.rpartition("/")
            name = name or head.text
            words = [head._replace(text=name), *words[1:]]
            if folder not in SYSTEM_BIN_DIRS:
                # `./git status` runs whatever ./git is: deny and ask rules match it as
                # `git`, but no allow rule for `git` may allow it (it asks each time).
                sensitive.append(head.text)
        else:
            name = head.text
            words = list(words)
        if name == "git":
            words, places, alias = _git_globals(words, sensitive)
            for place in places:  # `git -C DIR`: what lies in DIR is read (and more)
                self.file(place, "read")
            if alias is not None:  # git -c 'alias.p=!cmd' p: the alias runs as a script
                yield from self.script(alias, depth + 1, suspect)
        if name == "coproc" and len(words) > 2 and words[2].text in ("{", "("):
            words = [words[0], *words[2:]]  # coproc NAME { cmd; }: NAME names the coprocess
        texts = [w.text for w in words]
        slot = len(self.commands)
        self.commands.append(None)  # keep the outer command before what it runs
        outcome, stop = _NOTHING, len(words)
        key, wrapper, where = wrapper_lookup(texts)
        if wrapper is not None:  # global options between the key words: see unwrap
            stop, outcome = unwrap(key, wrapper, words, where, stdin)
        elif name in SHELLS:
            outcome = shell(words, stdin)
        elif name in INTERPRETERS or versioned_interpreter(name):
            outcome = interpreter(words, stdin)
            if len(texts) > 2 and texts[1] == "-m":  # python -m pip install x: as `pip …`
                self.speculative.append(SimpleCommand(tuple(texts[2:]), speculative=True,
                                                      note=f"{name} -m runs it"))
        elif name in ("source", ".") and len(words) > 1:
            outcome = source(words, stdin)
        elif name in ("eval", "alias", "trap"):
            outcome = code_builtin(name, words[1:])
        elif name in ("cd", "pushd", "popd"):
            env, outer_cdpath = tuple(env), self.cdpath
            self.cdpath = [*self.cdpath, *(w._replace(text=w.text.partition("=")[2])
                                           for var, w in env if var == "CDPATH")]
            self.chdir(name, words[1:])
            self.cdpath = outer_cdpath
        elif name in EVAL_BUILTINS:
            outcome = eval_builtin(name, words)
        if outcome.effects:
            yield from self.apply(outcome.effects, depth, suspect, sensitive, opaque)
        spec_key, spec = lookup(ARG_SPECS, texts)
        if spec is not None and (effects := inspect(spec_key, spec, words, stop, stdin)):
            yield from self.apply(effects, depth, suspect, sensitive, opaque)
        if name in ("ln", "cp") and _makes_symlink(texts):
            names = [t for t in texts[1:] if t != "--" and not t.startswith("-")]
            if names:
                link = names[-1].rstrip("/") or names[-1]
                self.links[link] = _link_target(link, names[-2]) if len(names) > 1 else None
        dynamic = outcome.note is not None or bool(opaque) or any(w.expand for w in words)
        note = outcome.note or (opaque[0] if opaque else None)
        if spec is None and wrapper is None and not dynamic and name not in NOT_RUNNERS \
                and name not in SHELLS and not versioned_interpreter(name):
            self.speculative += _speculate(texts)
        self.record(texts, dynamic, suspect, sensitive, note, slot)
        for var, word in env:
            self.record((word.text, *texts), dynamic or word.expand, suspect, (var,),
                        f"runs with {var} set")

    def apply(self, effects: Iterable[Effect], depth: int, suspect: str | None,
              sensitive: list[str], opaque: list[str]) -> Iterator[Nested]:
        """Carry out what a program's words mean, in order."""
        for effect in effects:
            if isinstance(effect, Sensitive):
                sensitive.append(effect.token)
            elif isinstance(effect, Opaque):
                opaque.append(effect.note)
            elif isinstance(effect, Command) and effect.guess is not None:
                self.speculative.append(SimpleCommand(  # another reading of the words
                    tuple(w.text for w in effect.words), speculative=True, note=effect.guess))
            elif isinstance(effect, FileUse):
                self.file(effect.word, effect.access)
            elif isinstance(effect, Script):
                yield from self.script(effect.word, depth + 1, suspect)
            elif isinstance(effect, Parse):
                yield Nested(effect.text, depth + 1, suspect)
            elif effect.chdir is None:
                yield from self.command(effect.words, depth + 1, effect.stdin, effect.env,
                                        suspect)
            else:  # env -C DIR CMD: CMD runs in DIR, what follows does not
                outer, self.cwd = self.cwd, None
                self.chdir("cd", [effect.chdir])
                yield from self.command(effect.words, depth + 1, effect.stdin, effect.env,
                                        suspect)
                self.cwd = outer


def _link_target(link: str, target: str) -> str | None:
    """Where ``ln -s TARGET LINK`` points, as a path from here (None when unknown)."""
    if "$" in target or "`" in target:
        return None
    if target.startswith(("/", "~")):
        return target.rstrip("/") or target
    base = link.rsplit("/", 1)[0] if "/" in link else "."
    return f"{base}/{target}".rstrip("/")


def _makes_symlink(texts: Sequence[str]) -> bool:
    """``ln -s``/``ln --symbolic``/``cp -s`` (in any option cluster)."""
    return any(t in ("--symbolic", "--symbolic-link") or
               (t.startswith("-") and not t.startswith("--") and "s" in t[1:]) for t in texts[1:])


@cache
def _plausible_command() -> re.Pattern[str]:
    """A word that could name a program (compiled once, on first use)."""
    return re.compile(r"[A-Za-z_][\w.+-]*")



def _speculate(texts: Sequence[str]) -> list[SimpleCommand]:
    """An unknown program may be a wrapper (`fakeroot rm -rf x`, `xvfb-run cmd`,
    `tool -- cmd`): what would be its inner command, offered to the deny rules."""
    starts: list[int] = []
    plausible = _plausible_command()
    if "--" in texts[1:]:
        starts.append(texts.index("--", 1) + 1)
    for i in range(1, len(texts)):
        if len(starts) >= 3:
            break
        if not texts[i].startswith("-") and plausible.fullmatch(texts[i]):
            starts.append(i)
            if i > 1 and texts[i - 1].startswith("-") and "=" not in texts[i - 1]:
                continue  # it may be that option's value: try the next word too
            break
    return [SimpleCommand(tuple(texts[start:]), speculative=True, note=f"{texts[0]} may run it")
            for start in dict.fromkeys(starts) if start < len(texts)]


def _git_globals(words: list[Word], sensitive: list[str]
                 ) -> tuple[list[Word], list[Word], Word | None]:
    """``git -C d -c k=v --no-pager push`` → ``git push``; -c/--exec-path are sensitive;
    also returns the directories named by -C/--git-dir/--work-tree. An alias set with
    ``-c alias.NAME=VALUE`` (git-config(1) "alias.*") and used as the subcommand is
    expanded: ``git -c alias.p=push p`` is ``git push``; a ``!cmd`` alias is returned as
    the shell script it runs (with the remaining words as its arguments)."""
    places: list[Word] = []
    aliases: dict[str, Word] = {}
    i = 1
    while i < len(words) and len(words[i].text) > 1 and words[i].text[0] == "-":
        name, eq, value = words[i].text.partition("=")
        if name in GIT_GLOBAL_SENSITIVE:
            sensitive.append(name)
        takes_value = name in GIT_GLOBAL_VALUE and not eq
        if name in GIT_GLOBAL_PLACES:
            if eq:
                places.append(words[i]._replace(text=value))
            elif i + 1 < len(words):
                places.append(words[i + 1])
        if name == "-c" and (eq or i + 1 < len(words)):
            setting = words[i]._replace(text=value) if eq else words[i + 1]
            key, _, command = setting.text.partition("=")
            if key.lower().startswith("alias."):
                aliases[key[6:].lower()] = setting._replace(text=command)
        i += 2 if takes_value else 1
    rest = words[i:]
    body = aliases.get(rest[0].text.lower()) if rest else None
    if body is None:
        return [words[0], *rest], places, None
    if body.text.startswith("!"):
        script = " ".join([body.text[1:], *(w.text for w in rest[1:])])
        return [words[0], *rest], places, body._replace(text=script)
    expanded = [body._replace(text=part) for part in body.text.split()]
    return [words[0], *expanded, *rest[1:]], places, None
