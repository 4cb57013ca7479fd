from __future__ import annotations

from dm_cc.tools.read import MAX_LINE_CHARS, ReadTool

from .helpers import call, derive, with_cwd

TOOL = ReadTool()


def test_lines_are_numbered_like_cat_n(ctx, project):
    (project / "a.txt").write_text("first\nsecond\r\nthird\n")
    out = call(TOOL, ctx, path="a.txt")
    assert not out.is_error
    assert out.output == "     1\tfirst\n     2\tsecond\n     3\tthird"
    assert out.display == "Read 3 lines"     # what was read, for the person: not "1 lines"
    (project / "one.txt").write_text("only\n")
    assert call(TOOL, ctx, path="one.txt").display == "Read 1 line"


def test_offset_and_limit_and_the_continue_note(ctx, project):
    (project / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = call(TOOL, ctx, path="a.txt", offset=4, limit=3)
    assert out.output.startswith("     4\tline 4\n     5\tline 5\n     6\tline 6\n")
    assert "showing lines 4-6" in out.output and "offset=7" in out.output
    assert out.display == "Read 3 lines from line 4, more remain"
    last = call(TOOL, ctx, path="a.txt", offset=8, limit=3)
    assert "more lines" not in last.output and last.display == "Read 3 lines from line 8"


def test_offset_past_the_end_is_an_error(ctx, project):
    (project / "a.txt").write_text("one\ntwo\n")
    out = call(TOOL, ctx, path="a.txt", offset=5)
    assert out.is_error and "has 2 lines" in out.output and out.display == out.output
    (project / "b.txt").write_text("one\n")
    assert "which has 1 line." in call(TOOL, ctx, path="b.txt", offset=5).output


def test_long_lines_are_cut(ctx, project):
    (project / "a.txt").write_text("x" * (MAX_LINE_CHARS + 500) + "\nshort\n")
    first, second = call(TOOL, ctx, path="a.txt").output.split("\n")
    assert first.startswith("     1\t" + "x" * MAX_LINE_CHARS + "…")
    assert "line cut" in first and second == "     2\tshort"


def test_output_is_capped_near_100k_characters(ctx, project):
    (project / "a.txt").write_text(("y" * 999 + "\n") * 300)
    out = call(TOOL, ctx, path="a.txt").output
    assert 100_000 <= len(out) < 103_000
    assert "more lines remain" in out


def test_empty_file(ctx, project):
    (project / "e.txt").write_text("")
    out = call(TOOL, ctx, path="e.txt")
    assert not out.is_error and "empty file" in out.output and out.display == "Read 0 lines"


def test_directory_missing_and_binary_are_errors(ctx, project):
    (project / "d").mkdir()
    (project / "readme.md").write_text("x")
    (project / "b.bin").write_bytes(b"\x89PNG\0\0\x01")
    directory = call(TOOL, ctx, path="d")
    assert directory.is_error and "is a directory" in directory.output
    missing = call(TOOL, ctx, path="reedme.md")
    assert missing.is_error and "File not found: reedme.md" in missing.output
    assert "Did you mean: readme.md" in missing.output
    binary = call(TOOL, ctx, path="b.bin")
    assert binary.is_error and "binary" in binary.output


def test_invalid_utf8_is_shown_with_replacement_characters(ctx, project):
    (project / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    out = call(TOOL, ctx, path="latin.txt")
    assert not out.is_error and "caf\ufffd" in out.output and "not valid UTF-8" in out.output


def test_paths_relative_to_cwd_and_home(ctx, project):
    (project / "sub").mkdir()
    (project / "sub" / "a.txt").write_text("in sub\n")
    (ctx.home / "notes.txt").write_text("at home\n")
    sub = with_cwd(ctx, project / "sub")
    assert "in sub" in call(TOOL, sub, path="a.txt").output
    assert "at home" in call(TOOL, ctx, path="~/notes.txt").output


def test_several_paths_at_once(ctx, project):
    (project / "a.txt").write_text("alpha\n")
    (project / "b.txt").write_text("beta\n")
    out = call(TOOL, ctx, path="ignored.txt", paths=["a.txt", "b.txt", "nope.txt"])
    assert not out.is_error
    assert "==> a.txt <==\n     1\talpha" in out.output
    assert "==> b.txt <==\n     1\tbeta" in out.output
    assert "==> nope.txt <==\nFile not found" in out.output
    assert "ignored.txt" not in out.output      # `paths` replaces `path`, as the requests do
    assert out.display == "Read 2 of 3 files (2 lines)"
    assert call(TOOL, ctx, path="x", paths=["nope.txt", "nada.txt"]).is_error


def test_requests_inside_and_outside_the_project(ctx, project):
    assert derive(TOOL, ctx, path="src/a.py") == [("read", "src/a.py")]
    outside = project.parent / "elsewhere" / "b.txt"
    assert derive(TOOL, ctx, path=str(outside)) == [
        ("read", str(outside)), ("external_directory", str(outside.parent))]
    assert derive(TOOL, ctx, path="x", paths=["a", "b"]) == [("read", "a"), ("read", "b")]
