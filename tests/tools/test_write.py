from __future__ import annotations

from dm_cc.tools.write import WriteTool

from .helpers import call, derive

TOOL = WriteTool()


def test_creates_parents_and_writes_exact_utf8(ctx, project):
    out = call(TOOL, ctx, path="deep/er/new.txt", content="héllo\nno newline")
    assert not out.is_error
    assert (project / "deep/er/new.txt").read_bytes() == "héllo\nno newline".encode()
    assert out.output == "Created deep/er/new.txt (2 lines, 17 bytes)."
    assert out.display.startswith("new file: deep/er/new.txt\n--- /dev/null\n+++ b/deep/er/new.txt")
    assert "+héllo" in out.display and "\\ No newline at end of file" in out.display


def test_overwrite_shows_a_unified_diff(ctx, project):
    (project / "a.txt").write_text("one\ntwo\nthree\n")
    out = call(TOOL, ctx, path="a.txt", content="one\n2\nthree\n")
    assert out.output == "Wrote a.txt (3 lines, 12 bytes)."
    assert "--- a/a.txt\n+++ b/a.txt\n" in out.display
    assert "-two\n+2\n" in out.display
    assert (project / "a.txt").read_text() == "one\n2\nthree\n"


def test_unchanged_content(ctx, project):
    (project / "a.txt").write_text("same\n")
    out = call(TOOL, ctx, path="a.txt", content="same\n")
    assert not out.is_error and "nothing changed" in out.output


def test_a_directory_is_an_error(ctx, project):
    (project / "d").mkdir()
    out = call(TOOL, ctx, path="d", content="x")
    assert out.is_error and "directory" in out.output


def test_an_unwritable_place_is_an_error(ctx, project):
    (project / "file").write_text("x")
    out = call(TOOL, ctx, path="file/below.txt", content="x")
    assert out.is_error and out.output.startswith("Cannot write file/below.txt")


def test_preview_shows_the_diff_and_writes_nothing(ctx, project):
    (project / "a.txt").write_text("old\n")
    params = TOOL.Params(path="a.txt", content="new\n")
    assert "-old\n+new" in TOOL.preview(params, ctx)
    assert (project / "a.txt").read_text() == "old\n"
    fresh = TOOL.preview(TOOL.Params(path="b.txt", content="b\n"), ctx)
    assert fresh.startswith("new file: b.txt") and not (project / "b.txt").exists()


def test_requests_are_edit_and_external_directory_outside(ctx, project):
    assert derive(TOOL, ctx, path="src/a.py", content="") == [("edit", "src/a.py")]
    outside = project.parent / "other" / "x.txt"
    assert derive(TOOL, ctx, path=str(outside), content="") == [
        ("edit", str(outside)), ("external_directory", str(outside.parent))]
    assert derive(TOOL, ctx, path="~/.bashrc", content="") == [
        ("edit", f"{ctx.home}/.bashrc"), ("external_directory", str(ctx.home))]
