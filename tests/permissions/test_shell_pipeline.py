"""dm_cc.permissions.shell as a pipeline: parse -> walk (records) -> judge (worklist)."""

from __future__ import annotations

from dm_cc.permissions.shell import analyse
from dm_cc.permissions.shell.quoting import Word
from dm_cc.permissions.shell.records import Broken, Command, FileUse, Noted, Redirected, Script, Stdin
from dm_cc.permissions.shell.source import syntax_tree
from dm_cc.permissions.shell.walk import walk


def records(source: str) -> list:
    src = source.encode()
    return list(walk(src, syntax_tree(src)))


def test_the_walk_yields_plain_records_in_source_order() -> None:
    found = records("cat <<EOF\n`rm x`\nEOF\nLD_PRELOAD=y ls > out; export PATH=/tmp")
    assert found == [
        Command([Word("cat")], Stdin("heredoc", "`rm x`\n"), redirected=True),
        Script(Word("rm x")),  # backticks in a heredoc body: tree-sitter leaves them as text
        Redirected(),  # the first redirect of the script (a heredoc here)
        Command([Word("ls")], None, (("LD_PRELOAD", Word("LD_PRELOAD=y")),), redirected=True),
        FileUse(Word("out"), "edit"),
        Noted([Word("export"), Word("PATH=/tmp")], ("PATH",), "sets PATH"),
    ]


def test_the_walk_ends_with_broken_when_the_parse_failed() -> None:
    assert isinstance(records("echo 'a")[-1], Broken)
    assert not any(isinstance(r, Broken) for r in records("echo a"))


def test_records_found_in_broken_text_carry_a_suspect_reason() -> None:
    found = records("``rm -rf x``")  # an orphaned command name inside an ERROR node
    assert found[0] == Command([Word("rm"), Word("-rf"), Word("x")],
                               suspect="found inside text that could not be parsed")
    assert isinstance(found[-1], Broken)


def test_a_nested_script_is_judged_before_the_command_that_ran_it_goes_on() -> None:
    # depth-first, as bash runs it: the outer command first, then what it runs, then the
    # rest of the outer command (here: its risky environment) and the next command
    commands = [c.text for c in analyse("LD_PRELOAD=x bash -c 'rm a'; ls").commands]
    assert commands == ["bash -c rm a", "rm a", "LD_PRELOAD=x bash -c rm a", "ls"]


def test_cd_in_a_nested_script_applies_to_the_rest_of_the_outer_command() -> None:
    files = [(f.path, f.access) for f in analyse(
        "find . -exec sh -c 'cd /etc' \\; -fprint out").files]
    assert files == [(".", "read"), ("out", "edit"), ("/etc/out", "edit")]


def test_a_directory_given_to_a_wrapper_applies_to_its_command_only() -> None:
    files = [f.path for f in analyse("env -C /etc cat passwd; cat y").files if not f.speculative]
    assert files == ["passwd", "/etc/passwd", "y"]
