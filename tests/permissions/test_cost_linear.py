"""Bounded cost (issue 22): deciding a line costs time linear in it, whatever its shape,
and the bounds never loosen a decision. Lines built to cost the square of their length
(nesting, parser error recovery, thousands of brace groups, ever deeper `cd` chains)
are judged here by what they decide -- a deny met anywhere still denies -- and by
counts of the work done (characters sliced, parser reads, directories looked up),
never by time; the times are benchmarks/bench_gate.py's."""

from __future__ import annotations

import os
import posixpath
import random

import pytest
from judging import A, D, R, assert_meets, project_in

from dm_cc.config import HostFilesystem
from dm_cc.permissions.shell import analyse
from dm_cc.permissions.shell import judge as judge_module
from dm_cc.permissions.shell.quoting import brace_expand
from dm_cc.permissions.shell.source import MAX_PIPES, syntax_tree
from dm_cc.permissions.shell.spans import SourceText


def nest(opening: str, closing: str, middle: str, depth: int) -> str:
    return opening * depth + middle + closing * depth


RM = [A("*"), D("rm *")]

CASES = [
 # a deny met before, inside or after what would cost the square of the line
 (RM, "bash", "echo " + "{a,b}" * 2_000 + "; rm -rf x", "deny"),  # was an internal error
 (RM, "bash", "rm -rf x; echo " + "{a,b}" * 2_000, "deny"),
 (RM, "bash", "a|" * (MAX_PIPES + 10) + "a; rm -rf x", "deny"),  # not parsed: word scan
 (RM, "bash", "rm -rf x; " + "a|" * (MAX_PIPES + 10), "deny"),
 (RM, "bash", "rm -rf x; " + nest("a[", "]", "1", 5_000), "deny"),  # parser stopped
 (RM, "bash", nest("a=(x ", "", "", 2_000) + "\nrm -rf x", "deny"),
 (RM, "bash", "rm -rf x )) " * 1_000, "deny"),
 (RM, "bash", "echo " + nest("${x:-", "}", "$(rm -rf x)", 2_000), "deny"),
 (RM, "bash", "echo " + nest("${x:-", "}", "${y#$(rm -rf x)}", 2_000), "deny"),
 (RM, "bash", "echo " + nest("$(echo ", ")", "$(rm -rf x)", 1_500), "deny"),
 (RM, "bash", nest("[[ $(", ") ]]", "rm -rf x", 800), "deny"),
 (RM, "bash", nest("[[ -v 'a[$(ls)]' && $(", ") ]]", "[[ -v 'a[$(rm -rf x)]' ]]", 300),
  "deny"),
 (RM, "bash", nest("$(( 1 + $(", ") ))", "rm -rf x", 800), "deny"),
 (RM, "bash", "find . " + "-exec ls {} \\; " * 600 + "-exec rm {} \\;", "deny"),
 (RM, "bash", "cd a; " * 1_500 + "rm -rf x", "deny"),
 (RM, "bash", "ls; " * 2_500 + "rm -rf x", "deny"),
 (RM, "bash", "".join(f"cat f{i}; " for i in range(1_200)) + "rm -rf x", "deny"),
 (RM, "bash", "eval eval eval ls; " * 500 + "eval eval rm -rf x", "deny"),
 ([A("*"), R("read", "**/f", "deny")], "bash", "cd a; cat f g h; " * 500, "deny"),
 ([A("*"), R("read", "~/.ssh/**", "deny")], "bash",
  "ln -s x l; cat l/y; " * 400 + "cat ~/.ssh/id_rsa", "deny"),
 ([A("*"), R("read", "~/.ssh/**", "deny")], "bash",
  "cat x | " * (MAX_PIPES + 10) + "cat ~/.ssh/id_rsa", "deny"),  # parsed: no error
 # what the bounds make ask, never allow
 ([A("*")], "bash", "echo $(( " + nest("$(( ", " ))", "PATH=1", 2_000) + " ))",
  "not-allow"),
 ([A("*")], "bash", "a|" * (MAX_PIPES + 10), "not-allow"),  # not parsed: an error
 ([A("*")], "bash", nest("a[", "]", "1", 5_000), "not-allow"),
 # ordinary long lines stay allowed
 ([A("ls *"), A("git status")], "bash", "ls -la src; " * 700 + "git status", "allow"),
 ([A("cat *"), A("cat"), R("read", "**", "allow")], "bash",
  "cat a | " * (MAX_PIPES + 10) + "cat", "allow"),  # a valid pipeline, parsed
 ([A("echo *")], "bash", "echo " + "{a,b}" * 3, "allow"),
 ([A("grep *"), A("head *"), R("read", "**", "allow")], "bash",
  "grep -n TODO src/a.py | head -5 && " * 200 + "grep -n x y", "allow"),
]


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    where = project_in(tmp_path_factory.mktemp("cost"))
    (where.home / ".ssh").mkdir()
    (where.home / ".ssh" / "id_rsa").write_text("k")
    return where


@pytest.mark.parametrize(("rules", "tool", "text", "expect"), CASES,
                         ids=[f"{c[1]}:{c[2][:30]}…{len(c[2])}" for c in CASES])
def test_variant(rules, tool, text, expect, where):
    assert_meets(rules, tool, text, expect, where)


# --------------------------------------------------------------------------- counts
NESTED = {
    "$(": lambda d: nest("$(", ")", "x", d),
    "${x:-": lambda d: nest("${x:-", "}", "y", d),
    "${x:- $(": lambda d: nest("${x:-", "}", "${x#$(ls)}", d),
    "$((": lambda d: nest("$((", "))", "1", d),
    "$((x=": lambda d: nest("$(( x=", " ))", "1", d),
    "[[": lambda d: nest("[[ $(", ") ]]", "x", d // 2),
    "[[ -eq": lambda d: nest("[[ 1 -eq $(", ") ]]", "x", d // 2),
    "a[": lambda d: nest("a[", "]", "1", d),
    "a[$((": lambda d: nest("a[$((", "))]=1", "1", d // 2),
    "for ((": lambda d: nest("for ((i=0;i<$(", ");i++)); do :; done", "y", d // 4),
    "a=$(": lambda d: nest("a=$(", ")", "x", d),
    "printf -v": lambda d: nest("printf -v x $(", ")", "x", d // 2),
    "for in <(": lambda d: nest("for x in <(", "); do :; done", "y", d // 2),
}


@pytest.mark.parametrize("build", NESTED.values(), ids=NESTED.keys())
def test_nested_text_is_read_about_once(build, monkeypatch):
    """The text the walk slices grows with the script, not with its square: a few
    hundred characters a node at most (each level asking about all it holds would
    slice the square of the script)."""
    import dm_cc.permissions.shell.walk as walk_module

    sliced = [0]
    real_slice, real_text = SourceText.slice, walk_module._Walk.text

    def counting_slice(self, node, cap=None):
        found = real_slice(self, node, cap)
        sliced[0] += len(found)
        return found

    def counting_text(self, node, cap=None):
        found = real_text(self, node, cap)
        sliced[0] += len(found)
        return found

    monkeypatch.setattr(SourceText, "slice", counting_slice)
    monkeypatch.setattr(walk_module._Walk, "text", counting_text)
    counts = []
    for depth in (300, 1_200):
        sliced[0] = 0
        analyse(build(depth))
        counts.append(sliced[0])
    assert counts[1] <= 5 * counts[0] + 4_096  # four times the depth: about four times


def test_the_parser_is_stopped_by_counting_reads_not_time():
    assert syntax_tree(nest("a[", "]", "1", 5_000).encode()) is None
    assert syntax_tree(("rm -rf x )) " * 1_000).encode()) is None
    assert syntax_tree(("a|" * (MAX_PIPES + 1)).encode()) is None
    assert syntax_tree(("a|" * (MAX_PIPES // 2) + "a").encode()) is not None
    ordinary = "git status && ls -la src; cat README.md | grep -n TODO; " * 2_000
    assert syntax_tree(ordinary.encode()) is not None  # 110 KB, parsed
    found = analyse(nest("a[", "]", "1", 5_000))
    assert any(c.dynamic and c.note and "could not be parsed" in c.note
               for c in found.commands)


def test_a_stopped_parse_leaves_the_parser_ready():
    assert syntax_tree(nest("a[", "]", "1", 5_000).encode()) is None
    tree = syntax_tree(b"ls -la")
    assert tree is not None and not tree.has_error and tree.text == b"ls -la"


def test_brace_expansion_has_an_allowance():
    many = "{a,b}" * 2_000
    assert brace_expand(many, many) is None  # one glob word, no recursion past the limit
    deep = "{" * 3_000 + "a,b" + "}" * 3_000
    assert brace_expand(deep, deep) is None
    assert brace_expand("r{m,}", "r{m,}") == [("rm", "rm"), ("r", "r")]


def test_a_guessed_script_is_judged_once_per_line(monkeypatch):
    judged = [0]
    real = judge_module.Judge.__init__

    def counting(self, *args, **kwargs):
        judged[0] += 1
        real(self, *args, **kwargs)

    monkeypatch.setattr(judge_module.Judge, "__init__", counting)
    analyse(nest("$(", ")", "x", 1_000))  # the same reading of its name at each level
    assert judged[0] <= 3


def test_a_repeated_command_is_read_once(monkeypatch):
    read = [0]
    real = judge_module.inspect

    def counting(*args, **kwargs):
        read[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(judge_module, "inspect", counting)
    judge_module._inspected.cache_clear()
    analyse("rm -f build/x.o; " * 500)
    assert read[0] == 1


# ------------------------------------------------------------------ paths, remembered
@pytest.fixture
def tree(tmp_path):
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "d").mkdir()
    (tmp_path / "a" / "ld").symlink_to("../d")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    (tmp_path / "etc").symlink_to("/etc")
    (tmp_path / "up").symlink_to("a/b")
    (tmp_path / "dangling").symlink_to("nothing")
    (tmp_path / "file").write_text("x")
    return tmp_path


def _canonical(realpath, path: str) -> tuple[str, ...]:
    """What canonical_path makes of a path: the lexical name, then the resolved one."""
    lexical = posixpath.normpath(path)
    if lexical.startswith("//"):
        lexical = "/" + lexical.lstrip("/")
    try:
        resolved = realpath(path)
    except (OSError, ValueError):
        resolved = lexical
    return (lexical,) if resolved == lexical else (lexical, resolved)


def test_one_decisions_paths_resolve_as_os_path_realpath(tree):
    parts = ["a", "b", "c", "d", "ld", "loop1", "etc", "up", "dangling", "file", "..", ".",
             "", "x", "passwd", "a\x00b", "n" * 300]
    rng = random.Random(7)
    remembering = HostFilesystem().for_one_decision()
    for i in range(3_000):
        if i % 300 == 0:
            remembering = HostFilesystem().for_one_decision()
        path = f"{tree}/" + "/".join(rng.choice(parts) for _ in range(rng.randint(0, 8)))
        if rng.random() < 0.1:
            path += "/"
        assert _canonical(remembering.realpath, path) == _canonical(os.path.realpath, path), path


def test_one_decision_looks_up_each_directory_once(tree, monkeypatch):
    looked_up = [0]
    real = os.lstat

    def counting(path, *args, **kwargs):
        looked_up[0] += 1
        return real(path, *args, **kwargs)

    remembering = HostFilesystem().for_one_decision()
    monkeypatch.setattr(os, "lstat", counting)
    deep = f"{tree}/a/b/c"
    for i in range(200):
        remembering.realpath(f"{deep}/f{i}")
    assert looked_up[0] <= len(deep.split("/")) + 200
    looked_up[0] = 0
    missing = f"{tree}/nothing" + "/a" * 1_000  # below a name that does not exist
    remembering.realpath(missing + "/f")
    assert looked_up[0] <= len(str(tree).split("/")) + 2


def test_a_cd_chain_resolves_in_one_pass(tmp_path, monkeypatch):
    where = project_in(tmp_path)
    looked_up = [0]
    real = os.lstat

    def counting(path, *args, **kwargs):
        looked_up[0] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counting)
    from dm_cc.permissions.requests import shell_requests

    line = "cd a; cat f g h; " * 300
    shell_requests("bash", line, where)
    assert looked_up[0] <= 2 * len(line)  # not once per directory of every path
