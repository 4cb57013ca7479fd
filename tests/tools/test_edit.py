from __future__ import annotations

from dm_cc.tools.edit import EditTool

from .helpers import call, derive

TOOL = EditTool()
SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


def test_replaces_a_unique_string(ctx, project):
    (project / "m.py").write_text(SOURCE)
    out = call(TOOL, ctx, path="m.py", old_string="def g():\n    return 1",
               new_string="def g():\n    return 2")
    assert not out.is_error
    assert out.output == "Edited m.py: replaced 1 occurrence at line 5."
    assert "--- a/m.py\n+++ b/m.py" in out.display and "-    return 1\n+    return 2" in out.display
    assert (project / "m.py").read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def test_ambiguous_string_is_an_error_unless_replace_all(ctx, project):
    (project / "m.py").write_text(SOURCE)
    out = call(TOOL, ctx, path="m.py", old_string="return 1", new_string="return 3")
    assert out.is_error and "occurs 2 times" in out.output and "replace_all" in out.output
    assert (project / "m.py").read_text() == SOURCE
    out = call(TOOL, ctx, path="m.py", old_string="return 1", new_string="return 3",
               replace_all=True)
    assert out.output == "Edited m.py: replaced 2 occurrences."
    assert (project / "m.py").read_text().count("return 3") == 2


def test_not_found_gives_a_hint(ctx, project):
    (project / "m.py").write_text(SOURCE)
    out = call(TOOL, ctx, path="m.py", old_string="return 42", new_string="x")
    assert out.is_error and "not found in m.py" in out.output and "exactly" in out.output
    out = call(TOOL, ctx, path="m.py", old_string="def g():\n  return 1", new_string="x")
    assert out.is_error and "whitespace or indentation starts at line 5" in out.output


def test_same_or_empty_strings_are_errors(ctx, project):
    (project / "m.py").write_text(SOURCE)
    same = call(TOOL, ctx, path="m.py", old_string="f", new_string="f")
    assert same.is_error and "the same" in same.output
    empty = call(TOOL, ctx, path="m.py", old_string="", new_string="x")
    assert empty.is_error and "use write" in empty.output


def test_missing_binary_and_directory_are_errors(ctx, project):
    (project / "bin").write_bytes(b"\xff\xfe\x00bad")
    (project / "d").mkdir()
    for path, words in (("nope.py", "File not found"), ("bin", "not UTF-8"), ("d", "directory")):
        out = call(TOOL, ctx, path=path, old_string="a", new_string="b")
        assert out.is_error and words in out.output


def test_windows_line_endings_are_kept(ctx, project):
    (project / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = call(TOOL, ctx, path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert not out.is_error
    assert (project / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_preview_shows_the_diff_without_writing(ctx, project):
    (project / "m.py").write_text(SOURCE)
    params = TOOL.Params(path="m.py", old_string="def f", new_string="def h")
    assert "-def f():\n+def h():" in TOOL.preview(params, ctx)
    assert (project / "m.py").read_text() == SOURCE
    bad = TOOL.Params(path="m.py", old_string="zzz", new_string="y")
    assert TOOL.preview(bad, ctx).startswith("(this edit would fail: old_string was not found")


def test_requests(ctx, project):
    assert derive(TOOL, ctx, path="m.py", old_string="a", new_string="b") == [("edit", "m.py")]
    outside = "/etc/hosts"
    assert derive(TOOL, ctx, path=outside, old_string="a", new_string="b") == [
        ("edit", "/etc/hosts"), ("external_directory", "/etc")]
