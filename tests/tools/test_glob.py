from __future__ import annotations

import os

from dm_cc.tools.glob_tool import MAX_RESULTS, GlobTool

from .helpers import call, derive, with_cwd

TOOL = GlobTool()


def make(root, *names, mtime=None):
    for index, name in enumerate(names):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
        if mtime is not None:
            os.utime(path, (mtime + index, mtime + index))


def test_globstar_matches_any_depth_newest_first(ctx, project):
    make(project, "a.py", "src/b.py", "src/deep/c.py", "notes.txt", mtime=1_000_000)
    out = call(TOOL, ctx, pattern="**/*.py")
    assert not out.is_error
    assert out.output.splitlines() == ["src/deep/c.py", "src/b.py", "a.py"]


def test_star_stays_in_one_directory_and_braces_work(ctx, project):
    make(project, "a.py", "b.md", "c.txt", "src/d.py")
    assert call(TOOL, ctx, pattern="*.py").output.splitlines() == ["a.py"]
    assert sorted(call(TOOL, ctx, pattern="*.{py,md}").output.splitlines()) == ["a.py", "b.md"]
    assert call(TOOL, ctx, pattern="./src/*.py").output == "src/d.py"


def test_dotfiles_match_but_vcs_and_dependency_dirs_are_skipped(ctx, project):
    make(project, ".env", ".github/ci.yml", ".git/config", "node_modules/x/index.js",
         "pkg/__pycache__/m.pyc", "app.js")
    found = sorted(call(TOOL, ctx, pattern="**/*").output.splitlines())
    assert found == [".env", ".github/ci.yml", "app.js"]
    assert call(TOOL, ctx, pattern="**/*.js").output == "app.js"


def test_path_and_results_relative_to_cwd(ctx, project):
    make(project, "src/a.py", "src/sub/b.py", "tests/t.py")
    lines = call(TOOL, ctx, pattern="**/*.py", path="src").output.splitlines()
    assert sorted(lines) == ["src/a.py", "src/sub/b.py"]
    inside = with_cwd(ctx, project / "src")
    assert sorted(call(TOOL, inside, pattern="**/*.py").output.splitlines()) == [
        "a.py", "sub/b.py"]
    assert call(TOOL, inside, pattern="*.py", path="../tests").output == str(
        project / "tests" / "t.py")


def test_results_are_capped_with_a_note(ctx, project):
    make(project, *(f"f{i:03}.txt" for i in range(MAX_RESULTS + 5)))
    out = call(TOOL, ctx, pattern="*.txt").output
    assert len(out.splitlines()) == MAX_RESULTS + 2   # a blank line, then the note
    assert f"showing the {MAX_RESULTS} newest of {MAX_RESULTS + 5}" in out


def test_symlinked_directories_are_not_followed(ctx, project, tmp_path):
    make(tmp_path, "outside/secret.py")
    (project / "link").symlink_to(tmp_path / "outside")
    make(project, "mine.py")
    assert call(TOOL, ctx, pattern="**/*.py").output == "mine.py"
    assert call(TOOL, ctx, pattern="link/*.py").output.startswith("No files match")


def test_no_match_is_not_an_error(ctx, project):
    out = call(TOOL, ctx, pattern="**/*.rs")
    assert not out.is_error and out.output == "No files match '**/*.rs' under .."


def test_patterns_that_leave_the_path_and_bad_paths_are_errors(ctx, project):
    make(project, "a.py")
    for pattern in ("/etc/*", "../*", "src/../../x", "~/x", ""):
        out = call(TOOL, ctx, pattern=pattern)
        assert out.is_error, pattern
    assert call(TOOL, ctx, pattern="*", path="missing").is_error
    assert call(TOOL, ctx, pattern="*", path="a.py").is_error


def test_requests_name_the_search_root(ctx, project):
    assert derive(TOOL, ctx, pattern="**/*.py") == [("glob", ".")]
    assert derive(TOOL, ctx, pattern="*", path="src") == [("glob", "src")]
    assert derive(TOOL, ctx, pattern="*", path="/opt/x") == [
        ("glob", "/opt/x"), ("external_directory", "/opt/x")]
