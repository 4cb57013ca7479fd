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
  to its basename (and read in lower case where the tables know only that: ``RM``),
  git's global options dropped, its other names found (:mod:`.names`), then the program modules say what it
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
  under DIR, so ``cd ~/.ssh && cat id_rsa`` still names ``~/.ssh/id_rsa``; git run there
  is one more request, ``git -C DIR …`` (a repository there brings its own config).
* Links the line makes (``ln``, ``cp -s``/``-l``, ``link``) and directories where a
  command may have left symlinks (an archive extracted, a patch applied: :mod:`.planting`)
  make later paths under them unknown targets.
"""

# No `from __future__ import annotations` here: NamedTuple classes build about twice as
# fast with evaluated annotations, and this module is imported at start-up.

import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache, lru_cache
from typing import Any, NamedTuple

from dm_cc.permissions.shell.arguments import inspect, setting_command
from dm_cc.permissions.shell.evaluation import code_value
from dm_cc.permissions.shell.names import dispatch_name, npm_command, other_names
from dm_cc.permissions.shell.planting import landing, made_links
from dm_cc.permissions.shell.programs import (
    ANY_NAME,
    RENAMING,
    Rename,
    code_builtin,
    crontab,
    dev_fd,
    embedded_commands,
    eval_builtin,
    interpreter,
    not_sh_shell,
    renames,
    shell,
    source,
    table_renames,
    versioned_interpreter,
)
from dm_cc.permissions.shell.quoting import Word, is_assignment, joined
from dm_cc.permissions.shell.records import (
    Access,
    Assigned,
    Broken,
    Command,
    Deferred,
    Effect,
    FileUse,
    Noted,
    Opaque,
    Outcome,
    Parse,
    Reach,
    Redirected,
    Script,
    Sensitive,
    Stdin,
)
from dm_cc.permissions.shell.results import FileRef, ShellAnalysis, SimpleCommand
from dm_cc.permissions.shell.source import (
    join_continuations,
    scan_pieces,
    syntax_tree,
    word_scan,
)
from dm_cc.permissions.shell.tables import first_words, lookup
from dm_cc.permissions.shell.tables.arguments import ARG_SPECS
from dm_cc.permissions.shell.tables.commands import (
    GIT_GLOBAL_PLACES,
    GIT_GLOBAL_SENSITIVE,
    GIT_GLOBAL_VALUE,
    NON_FILES,
    NOT_RUNNERS,
    SYSTEM_BIN_DIRS,
)
from dm_cc.permissions.shell.tables.environment import COMMAND_TABLES
from dm_cc.permissions.shell.tables.interpreters import (
    EVAL_BUILTINS,
    INTERPRETERS,
    NOT_SH_SHELLS,
    SHELLS,
)
from dm_cc.permissions.shell.tables.planting import PLANTERS
from dm_cc.permissions.shell.tables.wrappers import WRAPPERS
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


# Builtins whose arguments are parsed as the code they run (code_builtin): no guess needed.
_PARSED = frozenset({"eval", "alias", "trap"})

# Paths and commands one line may name: beyond, the rest is not looked at and the line
# asks (a line built to multiply its requests -- CDPATH entries times `cd`s times
# operands -- must not cost the person more than a line that names this many).
MAX_REFERENCES = 4_096
# Links and planted directories one line keeps apart: beyond, any path may be a link
# (each later path is checked against all of them).
MAX_LINKS = 256
# A directory `cd` may have led to, in characters, and CDPATH entries a line may set,
# kept apart: beyond, where later paths lie is unknown (4,096 is Linux's PATH_MAX).
MAX_CWD = 4_096
PATHS_SLACK = 4_096
MAX_CDPATH = 64


class Nested(NamedTuple):
    """A script to parse and judge before going on: the worklist's unit."""

    text: str
    depth: int
    suspect: str | None  # why its commands cannot be trusted (None: they can be)


class Judge:
    """Collects commands and files; knows programs (through the tables), not trees."""

    def __init__(self, size: int, scanning: bool = True, reads: bool = False) -> None:
        self.scanning = scanning  # whether text the parser rejects is word-scanned
        self.reads = scanning or reads  # whether a non-static name's reading is judged
        self.commands: list[SimpleCommand | None] = []
        self.files: list[FileRef] = []
        self.speculative: list[SimpleCommand] = []
        self.budget = 2 * size + 65_536  # characters that may be (re-)parsed in total
        # characters of the paths named in total: each is resolved component by component
        # (a symlink may be anywhere), so `cd a; cd a; …; cat f g h` must not name more
        # than a few times what the line holds
        self.path_budget = 2 * size + PATHS_SLACK
        self.cwd: tuple[str, bool] | None = None  # directory from `cd`, and whether unknown
        self.cdpath: list[Word] = []  # CDPATH set in this line: where `cd DIR` may lead
        self._cdpath_seen: tuple[int, int, dict[str, bool]] = (0, 0, {})  # (list, words, entries)
        self.elsewhere: list[tuple[str, bool]] = []  # more places the last `cd` may have led
        self.links: dict[str, str | None] = {}  # links this line makes -> what they reach
        # where commands of this line may have left symlinks (normalised paths from the
        # session's directory, each once; "." alone: anywhere), and how many were met
        # (repeated or not: MAX_LINKS of them make it anywhere)
        self.planted: list[str] = []
        self.plantings = 0
        # deferred evaluation: the first value stored that may hold code, and the first
        # place that evaluates a stored value (both in one line: the line is dynamic)
        self.deferred: dict[bool, str] = {}
        self.stored_code: list[str] = []  # static stored values holding a substitution
        self.overflowed = False  # MAX_REFERENCES reached: the rest is not recorded
        self.renamed: list[Rename] = []  # command names re-pointed (hash -p, alias ...)
        self.bodies: list[str] = []  # static heredoc and here-string texts in this line
        self.opaque = False  # a shell reads a script this line does not show it
        # While judging a guessed inner command (`fakeroot rm x`): why it is guessed;
        # what it records is speculative. `guessed`: the guesses judged so far (each once).
        self.guessing: str | None = None
        self.values: dict[str, str] = {}  # static values the line gives variables (c=rm)
        self.readings: dict[str, str] = {}  # text -> its plain reading with these values
        self.hosts: list[str] = []  # hosts network clients reach (curl URL, -x PROXY)
        self.guessed: set[tuple[str, ...]] = set()
        self.guessed_scripts: set[tuple[str, str]] = set()  # (script, note) judged on its own
        # a command of this line that may have written the repository's own files (an
        # archive extracted into the working directory): what it was, for the note
        self.planted_repository: str | None = None
        self.redirects = False  # the line has a redirect (one no command may carry: `> f`)

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
        if self.renamed:
            self.reread(source)
        if self.opaque:  # `exec 3<<< CODE; bash <&3`, `f() { sh; }; f <<< CODE`: a shell
            for body in dict.fromkeys(self.bodies):  # reads what it cannot be shown to read
                self.guess_script(body, "a shell in this line may read it as its script")

    def reread(self, source: str) -> None:
        """Commands whose name the line re-points (``BASH_CMDS[ls]=/bin/rm``, ``hash -p``,
        ``alias`` ...), wherever they stand: judged as what they may run instead (a name
        re-pointed to what cannot be known: dynamic, and each program the re-pointing
        command names is offered to the deny rules)."""
        commands = [c for c in self.commands if c is not None]
        if (ANY_NAME, None) in self.renamed:  # `read 'BASH_CMDS[ls]' <<< /bin/rm`, a
            # nameref `r[ls]=/bin/rm`: the value may come from any input or assignment of
            # the line: each program it names (a path's last part, a value) is offered too
            named = dict.fromkeys([*(word.rpartition("/")[2] for body in self.bodies
                                     for word in body.split()[:4]),
                                   *(m.group(1) for m in _named_program().finditer(
                                       source, 0, 16_384))])
            self.renamed += [(ANY_NAME, (program,)) for program in list(named)[:16] if program]
        for name, replacement in dict.fromkeys(self.renamed):
            if replacement is None:
                self.record((name,), True, None, note="re-points a command name to what "
                            "cannot be known (bash's command tables, enable, hash, alias)")
                continue
            for command in commands:
                if name == ANY_NAME:
                    self.speculative.append(SimpleCommand(
                        (*replacement, *command.words[1:]), speculative=True,
                        note="the line may re-point this command's name"))
                elif command.words[:1] == (name,):
                    self.record((*replacement, *command.words[1:]), True, None,
                                note=f"`{name}` is re-pointed by this line (bash's command "
                                "tables, hash or alias)")

    def result(self) -> ShellAnalysis:
        commands: dict[SimpleCommand, bool] = {}  # each once, redirected if once so
        for c in self.commands:
            if c is not None:
                plain = c._replace(redirected=False) if c.redirected else c
                commands[plain] = commands.get(plain, False) or c.redirected
        return ShellAnalysis(tuple(c._replace(redirected=True) if redirected else c
                                   for c, redirected in commands.items()),
                             tuple(dict.fromkeys(self.files)),
                             tuple(dict.fromkeys(self.speculative)),
                             tuple(dict.fromkeys(self.hosts)),
                             self.redirects and not any(commands.values()))

    # recording --------------------------------------------------------------
    def record(self, words: Sequence[str], dynamic: bool, suspect: str | None,
               sensitive: Sequence[str] = (), note: str | None = None,
               slot: int | None = None, names: tuple[tuple[str, ...], ...] = (),
               runs_in: str | None = None, redirected: bool = False) -> None:
        """Store one SimpleCommand (in a reserved ``slot`` when given); while a guess is
        judged, as a speculative command."""
        tokens = tuple(dict.fromkeys(sensitive)) if sensitive else ()
        if tokens and any(t.partition("[")[0] in COMMAND_TABLES for t in tokens):
            self.renamed += table_renames(words)
        if self.guessing is not None:
            if not self._full(self.speculative):
                self.speculative.append(SimpleCommand(tuple(words), dynamic, tokens,
                                                      self.guessing, True, names))
            return
        if suspect is not None and not dynamic:
            dynamic, note = True, note or suspect
        if tokens and note is None:
            note = f"uses {', '.join(tokens)}"
        command = SimpleCommand(tuple(words), dynamic, tokens, note, False, names, runs_in,
                                redirected)  # (positional: built for every command)
        if slot is None:
            if self._full(self.commands):
                return
            self.commands.append(command)
        else:
            self.commands[slot] = command

    def dynamic(self, text: str, note: str) -> None:
        self.record((" ".join(text.split())[:SHOWN],), True, None, note=note)

    def _full(self, found: list[Any], path: str = "") -> bool:
        """Whether ``found`` holds MAX_REFERENCES already, or the paths named so far
        (with ``path``) exceed their budget; the first time, the line is made to ask
        (one command more, past the cap, that says why)."""
        self.path_budget -= len(path)
        if len(found) < MAX_REFERENCES and self.path_budget >= 0:
            return False
        if not self.overflowed:
            self.overflowed = True
            self.commands.append(SimpleCommand(
                ("(the rest of the line)",), True, (),
                f"names more than {MAX_REFERENCES:,} paths or commands, or paths longer in "
                "all than twice the line: too many to judge one by one"))
        return True

    def file(self, word: Word, access: Access) -> None:
        guess = self.guessing is not None  # a guess's files: for deny rules only
        path = word.text
        if word.procsub or path in ("", "-", "{}") or path in NON_FILES or (
                path[:1] == "/" and dev_fd(path)):
            return
        dynamic = word.expand or word.glob
        if path[:1] == "~" and path != "~" and path[:2] != "~/":
            dynamic = True  # ~+ ($PWD), ~- ($OLDPWD), ~user: only the running shell knows
        for link, target in self.links.items():
            if path == link or path.startswith(link + "/"):
                dynamic = True  # through a link made earlier in this line: judged as
                if target is not None:  # written (not allowable) and through its target
                    self.files.append(FileRef(target + path[len(link):], access, False,
                                              guess))
        dynamic = dynamic or self.under_planted(path)
        if self._full(self.files, path):
            return
        self.files.append(FileRef(path, access, dynamic, guess))
        if self.cwd is not None and not path.startswith(("/", "~")):
            for base, unknown in (self.cwd, *self.elsewhere):  # after `cd DIR`: DIR/path
                there = f"{base.rstrip('/')}/{path}"
                if self._full(self.files, there):
                    return
                self.files.append(FileRef(there, access, dynamic or unknown
                                          or self.under_planted(there), guess))

    def link(self, name: Word, target: str | None) -> None:
        """A second name this line makes for ``target`` (``ln``, ``cp -s``/``-l``,
        ``link``): later paths under it are unknown targets, also judged at ``target``.
        A name that is not static, or one link too many, may be any path."""
        if name.expand or name.glob or len(self.links) >= MAX_LINKS:
            self.planted = ["."]
        else:
            self.links[name.text.rstrip("/") or name.text] = target

    def plant(self, what: str, where: Iterable[Word], repository: bool) -> None:
        """``what`` may have left symlinks under each of ``where`` (an archive's members,
        a patch's files, a checkout, a copy): a later path under one is an unknown target.
        A directory given relative to the session's one is a prefix of the paths it
        covers; any other (absolute, ``~``, ``..``, not static, after a ``cd`` that is
        not) covers every path, as the session's own directory does (the analysis does
        not know where that is, so an absolute path may lie in it)."""
        for word in where:
            scope = self._scope(word)
            if repository and (scope == "." or scope.split("/", 1)[0].lower() == ".git"):
                self.planted_repository = self.planted_repository or what
            if scope == "." or self.plantings >= MAX_LINKS:
                self.planted = ["."]
            elif "." not in self.planted:
                self.plantings += 1
                if scope not in self.planted:  # (`tar xf a -C d` a thousand times: d once)
                    self.planted.append(scope)

    def _scope(self, word: Word) -> str:
        """``word``, a directory, as a normalised path from the session's directory
        (``.``: unknown, or the session's directory itself)."""
        text = word.text
        if word.expand or word.glob or (self.cwd is not None and self.cwd[1]):
            return "."
        if self.cwd is not None and not text.startswith(("/", "~")):
            text = f"{self.cwd[0].rstrip('/')}/{text}"
        if text.startswith(("/", "~")):
            return "."
        text = posixpath.normpath(text)
        return "." if text == ".." or text.startswith("../") else text

    def under_planted(self, path: str) -> bool:
        """Whether ``path`` may lie under what a command of this line planted."""
        if not self.planted:
            return False
        if self.planted == ["."] or path.startswith(("/", "~")):
            return True
        path = posixpath.normpath(path)
        if path == ".." or path.startswith("../"):
            return True
        return any(path == scope or path.startswith(scope + "/") for scope in self.planted)

    def chdir(self, name: str, args: Sequence[Word]) -> None:
        """Track ``cd``: later relative paths are also reported under the new directory.
        (Subshells are not tracked, so both spellings are always reported.)"""
        if self.guessing is not None:  # a guessed `cd` is not followed
            return
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
                               unknown or dynamic) for entry, dynamic in self._cdpath_entries()]
        if self.cwd is not None and not text.startswith(("/", "~")):
            text, unknown = f"{self.cwd[0].rstrip('/')}/{text}", unknown or self.cwd[1]
        if len(text) > MAX_CWD:  # `cd a; cd a; …` a thousand times: each later path would
            text, unknown = "$PWD", True  # name them all, and resolving it costs as much
        self.cwd = (text, unknown)

    def _cdpath_entries(self) -> list[tuple[str, bool]]:
        """The CDPATH entries this line may have set, each once, and whether each is not
        static; past MAX_CDPATH of them, one unknown entry (a line setting thousands
        would make every `cd` cost as many places)."""
        which, done, entries = self._cdpath_seen
        if which != id(self.cdpath) or done > len(self.cdpath):
            done, entries = 0, {}  # another list (`CDPATH=x cd y` adds to a copy)
        for word in self.cdpath[done:]:  # only the words added since the last `cd`
            for entry in word.text.split(":"):
                if entry and len(entries) <= MAX_CDPATH:
                    entries[entry] = entries.get(entry, False) or word.expand or word.glob
        self._cdpath_seen = (id(self.cdpath), len(self.cdpath), entries)
        return [("$CDPATH", True)] if len(entries) > MAX_CDPATH else list(entries.items())

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
                                        record.suspect or suspect, record.redirected)
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
            elif isinstance(record, Deferred) and self.guessing is None:
                self.deferred.setdefault(record.stores, record.text)
                if record.code is not None and len(self.stored_code) < 8:
                    self.stored_code.append(record.code)
            elif isinstance(record, Assigned):
                if len(self.values) < 64 or record.name in self.values:
                    self.values[record.name] = record.value
                    self.readings.clear()
            elif isinstance(record, Redirected):
                self.redirects = True
            elif isinstance(record, Broken):
                self.dynamic(text, record.why)
                self.scan(text)

    def scan(self, text: str) -> None:
        """Text the parser rejected (``for x in a; { rm x; }`` is valid bash): every
        plausible command a word scan finds is judged as a guess, by the deny rules only,
        so a deny is not lost to a parse error. (The guesses, each word quoted, are judged
        by a judge of their own: wrappers and ``bash -c`` are followed as usual; so are
        the scan's pieces that parse on their own, as written, with the readings of a
        name that is not static: ``{rm,-rf,x}``, ``c=rm; $c x``, ``BASH_CMDS[ls]=…``.)"""
        if self.scanning:
            note = "found in text the parser rejected"
            self.guess_script("\n".join(" ".join(map(_quoted, words))
                                         for words in word_scan(text)), note)
            # and the pieces that parse, as written (apart: a heredoc opened in one must not
            # swallow the scan's words)
            self.guess_script("\n".join(scan_pieces(text)), note, reads=True)

    def reading(self, text: str) -> str:
        """``text`` as bash most often reads it with the values set so far (each text
        once: ``$($($(…)))`` shows the same text at every level)."""
        found = self.readings.get(text)
        if found is None:
            found = self.readings[text] = _plain_reading(text, self.values)
        return found

    def guess_script(self, script: str, note: str, reads: bool = False) -> None:
        """Judge ``script`` on its own and offer its commands to the deny rules only (each
        script once: the same reading of `$($($(…)))` at every level adds nothing)."""
        if (script, note) in self.guessed_scripts:
            return
        self.guessed_scripts.add((script, note))
        sub = Judge(len(script), scanning=False, reads=reads)
        sub.run(script)
        found = sub.result()
        for command in (*found.commands, *found.speculative):
            if self._full(self.speculative):
                return
            self.speculative.append(SimpleCommand(command.words, speculative=True, note=note,
                                                  names=command.names))

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
                redirected: bool = False) -> Iterator[Nested]:
        """Record one command (and whatever it runs in turn); ``redirected``: it runs
        with a redirect (the `redirect` request: requests.py)."""
        if not words:
            return
        if depth > MAX_DEPTH:
            self.dynamic(joined(words).text, "wrapped or nested too deeply to analyse")
            return
        head = words[0]
        if head.expand or head.glob or head.procsub:
            texts = [head.text] if len(words) == 1 else [w.text for w in words]
            self.record(texts, True, suspect,
                        note="the command name is not static", redirected=redirected)
            text = " ".join(texts)  # `rm${IFS}-rf x`, `c=rm; $c x`: also as it usually
            reading = self.reading(text)  # reads (not in a guess's judge)
            if self.reads and self.guessing is None and reading != text:
                self.guess_script(reading, "the command as it reads with the values this "
                                  "line sets, the default IFS and other variables unset")
            return
        if head.text in _RESERVED or is_assignment(head.text):
            # `time for i in 1; do rm x; done`, `time x=1`: tree-sitter read a compound
            # command or an assignment as plain words; judge what follows the first word too
            self.record([w.text for w in words], True, suspect,
                        note="shell syntax the parser read as a command", redirected=redirected)
            yield from self.command(words[1:], depth + 1, stdin, suspect=_GROUP,
                                    redirected=redirected)
            return
        if head.text in ("{", "}", "(", ")"):  # `coproc { cmd; }`, `time { cmd; }`: a group
            self.record([w.text for w in words], True, suspect,  # the parser read as words
                        note="a command group the parser did not understand",
                        redirected=redirected)
            yield from self.command(words[1:], depth + 1, stdin, suspect=_GROUP,
                                    redirected=redirected)
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
        spelled = name  # recorded as written; `RM`, `Sudo` are read as the program they
        if name.lower() != name:  # run where the filesystem folds case (most names are
            name = dispatch_name(name, _known())  # in lower case: no table is asked)
        if name != words[0].text:
            words = [words[0]._replace(text=name), *words[1:]]
        as_given = words  # as written, with git's global options
        if name == "git":
            words, places, scripts = _git_globals(words, sensitive)
            for place in places:  # `git -C DIR`: what lies in DIR is read (and more)
                self.file(place, "read")
            for script in scripts:  # git -c core.pager=CMD, git -c 'alias.p=!cmd' p
                yield from self.script(script, depth + 1, suspect)
        if name == "coproc" and len(words) > 2 and words[2].text in ("{", "("):
            words = [words[0], *words[2:]]  # coproc NAME { cmd; }: NAME names the coprocess
        # (a one-word command, the usual one in a pipeline, without a comprehension)
        texts = [words[0].text] if len(words) == 1 else [w.text for w in words]
        written = (spelled, *texts[1:])  # recorded: the name as written
        names = _other_names(written)  # ... and every other name it has
        if name == "npm" and len(words) > 1:  # `npm exe CMD` is `npm exec CMD` (a wrapper)
            words = [words[0], words[1]._replace(text=npm_command(words[1].text)
                                                 or words[1].text), *words[2:]]
            texts = [w.text for w in words]
        if name in RENAMING:
            self.renamed += renames(name, words[1:])
        slot: int | None = None  # past MAX_REFERENCES: not recorded (the line asks)
        if self.guessing is not None or not self._full(self.commands):
            slot = len(self.commands)
            self.commands.append(None)  # keep the outer command before what it runs
        outcome, stop = _NOTHING, len(words)
        key, wrapper, where = wrapper_lookup(texts) if texts[0] in _WRAPPER_HEADS \
            else _NO_WRAPPER
        if wrapper is not None:  # global options between the key words: see unwrap
            stop, outcome = unwrap(key, wrapper, words, where, stdin)
        elif name in SHELLS:
            outcome = (not_sh_shell if name in NOT_SH_SHELLS else shell)(words, stdin)
        elif name in INTERPRETERS or versioned_interpreter(name):
            outcome = interpreter(words, stdin)
            if self.scanning and self.guessing is None:  # python3 -c 'os.system("rm x")'
                for found in embedded_commands(words, stdin):
                    self.guess_script(found, f"{name}'s inline code runs it")
            if len(texts) > 2 and texts[1] == "-m":  # python -m pip install x: as `pip …`
                yield from self.guess(words[2:], depth, f"{written[0]} -m runs it")
        elif name in ("source", ".") and len(words) > 1:
            outcome = source(words, stdin)
        elif name == "crontab":
            outcome = crontab(words, stdin)
        elif name in ("eval", "alias", "trap"):
            outcome = code_builtin(name, words[1:])
        elif name in ("cd", "pushd", "popd"):
            env, outer_cdpath = tuple(env), self.cdpath
            if any(var == "CDPATH" for var, _ in env):  # CDPATH=x cd y: for this cd only
                self.cdpath = [*self.cdpath, *(w._replace(text=w.text.partition("=")[2])
                                               for var, w in env if var == "CDPATH")]
            self.chdir(name, words[1:])
            self.cdpath = outer_cdpath
        elif name in EVAL_BUILTINS:
            outcome = eval_builtin(name, words)
        if stdin is not None and stdin.script and len(self.bodies) < 16:
            self.bodies.append(stdin.script)
        if (name in SHELLS or name in ("source", ".")) and (
                outcome.note is not None or any(w.expand or w.procsub for w in words[1:])):
            self.opaque = True
        if outcome.effects:
            yield from self.apply(outcome.effects, depth, suspect, sensitive, opaque)
        spec_key, spec = lookup(ARG_SPECS, texts) if texts and texts[0] in _SPEC_HEADS \
            else _NO_ENTRY
        if spec is not None and (effects := _inspected(spec_key, tuple(words), stop, stdin)):
            yield from self.apply(effects, depth, suspect, sensitive, opaque)
        if name in ("ln", "cp", "link"):
            for link, target in made_links(name, words):
                self.link(link, target)
        plant_key, plants = lookup(PLANTERS, texts) if texts and texts[0] in _PLANT_HEADS \
            else _NO_ENTRY
        if plants is not None:
            self.plant(" ".join(plant_key), landing(plant_key, plants, spec, words),
                       plants.repository)
        dynamic = outcome.note is not None or bool(opaque) or (  # (the name is static)
            len(words) > 1 and any(w.expand for w in words))
        note = outcome.note or (opaque[0] if opaque else None)
        self.record(written, dynamic, suspect, sensitive, note, slot, names,
                    redirected=redirected)
        for var, word in env:
            self.record((word.text, *written), dynamic or word.expand, suspect, (var,),
                        f"runs with {var} set")
            for code in code_value(var, word):  # GIT_SSH_COMMAND='cmd' git fetch runs cmd
                yield from self.script(code.word, depth + 1, suspect)
        if name == "git":
            self.git_elsewhere(as_given, suspect)
        if spec is None and wrapper is None and not dynamic and name not in NOT_RUNNERS \
                and name not in SHELLS and name not in _PARSED and not versioned_interpreter(name):
            for start in _speculate(texts):
                yield from self.guess(words[start:], depth, f"{written[0]} may run it")

    def guess(self, words: list[Word], depth: int, why: str) -> Iterator[Nested]:
        """Judge a guessed inner command like any command (its name reduced, wrappers
        unwrapped, scripts parsed), everything it records speculative: only a deny
        rule decides it. Each guess once (a guess of a guess is a later suffix)."""
        key = tuple(w.text for w in words)
        if not key or key in self.guessed:
            return
        self.guessed.add(key)
        outer, self.guessing = self.guessing, self.guessing or why
        try:
            yield from self.command(words, depth + 1, suspect=None)
        finally:
            self.guessing = outer

    def git_elsewhere(self, words: list[Word], suspect: str | None) -> None:
        """git run in another directory than the session's finds the repository there:
        a directory laid out as a git dir (``HEAD``, ``config``, ``objects/``, ``refs/``;
        gitrepository-layout(5), found by git's discovery without any ``.git``) or one
        holding ``.git``. Its config runs commands (``core.fsmonitor`` on ``git status``
        and ``git diff``, ``core.pager``, hooks: git-config(1)). So such a run is one more
        request, ``git -C DIR …`` (``cd DIR``, ``pushd``, ``env -C`` and ``sudo -D`` put
        as git's own ``-C``), which only an allow rule naming ``-C`` allows, and none when
        DIR is not static. Left out when DIR is the session's directory (``runs_in``)."""
        dirs, other = _git_directories(words)
        rest = [w.text for w in words[1:]]
        if self.planted_repository is not None:
            self.record(("git", *rest), True, suspect, note=(
                f"runs after {self.planted_repository}, which may have written the "
                "repository's own files (its config runs commands)"))
        if self.cwd is None and not dirs and not other:
            return
        unknown = any(d.expand or d.glob for d in dirs)
        for base in [None] if self.cwd is None else [self.cwd, *self.elsewhere]:
            start = [] if base is None else [base[0]]
            dynamic = unknown or (base is not None and base[1])
            parts = [*start, *(d.text for d in dirs)]
            self.record(("git", *(["-C", *start] if start else []), *rest), dynamic, suspect,
                        ("-C",), note=(
                            f"runs git in {' then '.join(parts) or 'another git directory'}:"
                            " a repository there brings its own config, which can run "
                            "commands"),
                        runs_in=None if dynamic or other else _here(_directory(parts)))

    def apply(self, effects: Iterable[Effect], depth: int, suspect: str | None,
              sensitive: list[str], opaque: list[str]) -> Iterator[Nested]:
        """Carry out what a program's words mean, in order."""
        for effect in effects:
            if isinstance(effect, Sensitive):
                sensitive.append(effect.token)
            elif isinstance(effect, Opaque):
                opaque.append(effect.note)
            elif isinstance(effect, Reach):
                if not (effect.word.expand or self._full(self.hosts)):
                    self.hosts.append(effect.word.text)
            elif isinstance(effect, Command) and effect.guess is not None:
                yield from self.guess(effect.words, depth, effect.guess)  # another reading
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


def _quoted(word: str) -> str:
    """``word`` single-quoted: read back by bash as exactly ``word``."""
    return "'" + word.replace("'", "'\\''") + "'"



def _git_directories(words: Sequence[Word]) -> tuple[list[Word], bool]:
    """The directories git's ``-C`` options name, in order, and whether ``--git-dir`` or
    ``--work-tree`` names another place (git(1) OPTIONS; ``-C`` takes its own word)."""
    dirs: list[Word] = []
    other, i = False, 1
    while i < len(words) and len(words[i].text) > 1 and words[i].text[0] == "-":
        name, eq, _ = words[i].text.partition("=")
        if name == "-C" and i + 1 < len(words):
            dirs.append(words[i + 1])
        elif name in GIT_GLOBAL_PLACES:
            other = True
        i += 2 if name in GIT_GLOBAL_VALUE and not eq else 1
    return dirs, other


def _directory(parts: Sequence[str]) -> str:
    """Where ``cd BASE; git -C D1 -C D2`` runs, from the session's directory (each
    relative ``-C`` is taken from the one before: git(1) ``-C``)."""
    path = "."
    for part in parts:
        if part:  # `-C ''` leaves the directory as it is
            path = part if part.startswith(("/", "~")) else posixpath.join(path, part)
    # `sub/..` is the parent of where sub leads, not `.` (a `..` segment, found without
    # splitting: after `cd a; cd a; …` the path is as long as every cd so far)
    if path == ".." or path.startswith("../") or path.endswith("/..") or "/../" in path:
        return path
    return posixpath.normpath(path) if not path.startswith("~") else path


def _here(directory: str) -> str | None:
    """``directory`` when it may be the session's own (``.``, or an absolute or ``~``
    path short enough to resolve cheaply); None for any other: relative, it lies
    below (or, through ``..`` and symlinks, anywhere), and git there asks."""
    if directory == "." or (directory.startswith(("/", "~")) and len(directory) <= 256):
        return directory
    return None


# What a command's words mean to the tables is a pure function of them: a line repeating
# a command (a loop unrolled, `cd a; cat f; cd a; cat f …`) reads it once. Keyed by the
# words as read (text and flags), at most _READINGS of them kept.
_READINGS = 1_024
# the programs with an entry in each table (the others skip building its keys)
_SPEC_HEADS, _PLANT_HEADS = first_words(ARG_SPECS), first_words(PLANTERS)
_NO_ENTRY: tuple[tuple[str, ...], None] = ((), None)
_WRAPPER_HEADS = first_words(WRAPPERS)
_NO_WRAPPER: tuple[tuple[str, ...], None, Sequence[int]] = ((), None, ())


@lru_cache(maxsize=_READINGS)
def _other_names(written: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return other_names(written)


@lru_cache(maxsize=_READINGS)
def _inspected(key: tuple[str, ...], words: tuple[Word, ...], stop: int,
               stdin: Stdin | None) -> tuple[Effect, ...]:
    return tuple(inspect(key, ARG_SPECS[key], list(words), stop, stdin))


@cache
def _known() -> frozenset[str]:
    """Every program name a table knows (built once, on first use)."""
    return frozenset({key[0] for key in (*ARG_SPECS, *WRAPPERS)}
                     | SHELLS | INTERPRETERS | NOT_RUNNERS | EVAL_BUILTINS)


@cache
def _plausible_command() -> re.Pattern[str]:
    """A word that could name a program (compiled once, on first use)."""
    return re.compile(r"(?:[\w.+-]*/)*[A-Za-z_][\w.+-]*")



def _speculate(texts: Sequence[str]) -> list[int]:
    """An unknown program may be a wrapper (`fakeroot rm -rf x`, `xvfb-run cmd`,
    `tool -- cmd`): where its inner command would start, to be offered to the deny
    rules (a path counts as a name: `fakeroot /bin/rm`)."""
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
    return [start for start in dict.fromkeys(starts) if start < len(texts)]


@cache
def _parameter() -> re.Pattern[str]:
    """A parameter expansion: ``$IFS``/``${IFS}`` (group 1), ``$NAME``/``${NAME}`` (group 2
    or 3), or any other ``${..}``, ``$1``, ``$@`` ... (compiled once, on first use)."""
    return re.compile(r"(\$\{IFS\}|\$IFS\b)|\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)"
                      r"|\$\{[^}]*\}|\$[0-9@*#?$!-]")


def _plain_reading(text: str, values: dict[str, str]) -> str:
    """``text`` as bash most often reads it: ``$IFS`` splits words (a space), a variable
    the line set to a static value has it, any other parameter is unset (empty). Used for
    a name that is not static: a reading for the deny rules (``rm${IFS}-rf x`` is ``rm
    -rf x``; ``c=rm; $c x`` is ``rm x``; ``r${u}m`` is ``rm``)."""
    def value(m: re.Match[str]) -> str:
        return " " if m.group(1) else values.get(m.group(2) or m.group(3) or "", "")
    return _parameter().sub(value, text)


def _git_globals(words: list[Word], sensitive: list[str]
                 ) -> tuple[list[Word], list[Word], list[Word]]:
    """``git -C d -c k=v --no-pager push`` → ``git push``; -c/--exec-path are sensitive;
    also returns the directories named by -C/--git-dir/--work-tree, and the scripts the
    settings may run: a setting whose value is a command (``-c core.sshCommand=CMD``,
    ``GIT_COMMAND_KEYS``), and an alias set with ``-c alias.NAME=VALUE`` (git-config(1)
    "alias.*") and used as the subcommand, which is expanded: ``git -c alias.p=push p`` is
    ``git push``; a ``!cmd`` alias is the shell script it runs (with the remaining words
    as its arguments)."""
    places: list[Word] = []
    scripts: list[Word] = []
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
            elif run := setting_command("git", key, command):
                scripts.append(setting._replace(text=run))
        i += 2 if takes_value else 1
    rest = words[i:]
    body = aliases.get(rest[0].text.lower()) if rest else None
    if body is None:
        return [words[0], *rest], places, scripts
    if body.text.startswith("!"):
        script = " ".join([body.text[1:], *(w.text for w in rest[1:])])
        return [words[0], *rest], places, [*scripts, body._replace(text=script)]
    expanded = [body._replace(text=part) for part in body.text.split()]
    return [words[0], *expanded, *rest[1:]], places, scripts



@cache
def _named_program() -> re.Pattern[str]:
    """A program a line may name as a value: a path's last part or an assigned word."""
    return re.compile(r"[=/]([\w.+-]+)(?=[\s;&|)}'\"]|$)")
