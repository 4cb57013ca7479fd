"""Which directory is the project (config/dirs.py ``find_project``), with real
directories: the repository when there is one; without one, the outermost
``.dm_cc/`` below the home directory. A ``.dm_cc/`` between the root and the
working directory (planted by a command, or shipped in a sub-directory) is not the
project's: it is ignored and named, so a session started there keeps the team's
top-level rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from dm_cc.config import find_project, project_root


@pytest.fixture
def tree(tmp_path: Path):
    """``make("a/.git", "a/b/.dm_cc")`` creates those directories under tmp_path
    (a name ending in ``=file`` is created as a file) and returns tmp_path."""
    def make(*paths: str) -> Path:
        for path in paths:
            target = tmp_path / path.removesuffix("=file")
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.endswith("=file"):
                target.write_text("gitdir: elsewhere\n")
            else:
                target.mkdir(parents=True, exist_ok=True)
        return tmp_path
    return make


def found(start: Path, home: Path) -> tuple[Path, tuple[Path, ...]]:
    project = find_project(start, home)
    return project.root, project.ignored


def test_a_dm_cc_below_the_repository_root_is_not_the_project(tree):
    t = tree("repo/.git", "repo/.dm_cc", "repo/sub/.dm_cc", "repo/sub/deeper")
    root, ignored = found(t / "repo/sub/deeper", t / "home")
    assert root == t / "repo"
    assert ignored == (t / "repo/sub/.dm_cc",)
    assert project_root(t / "repo/sub/deeper", t / "home") == t / "repo"


def test_every_dm_cc_between_the_root_and_the_working_directory_is_named(tree):
    t = tree("repo/.git", "repo/a/.dm_cc", "repo/a/b/.dm_cc", "repo/a/b/c")
    assert found(t / "repo/a/b/c", t / "home") == (
        t / "repo", (t / "repo/a/b/.dm_cc", t / "repo/a/.dm_cc"))


def test_a_repository_without_a_dm_cc_is_the_project_all_the_same(tree):
    t = tree("repo/.git", "repo/sub/.dm_cc")
    assert found(t / "repo/sub", t / "home") == (t / "repo", (t / "repo/sub/.dm_cc",))


def test_a_git_file_makes_a_repository_too(tree):
    """A worktree or a submodule has a `.git` file naming its git directory."""
    t = tree("wt/.git=file", "wt/.dm_cc", "wt/sub/.dm_cc")
    assert found(t / "wt/sub", t / "home") == (t / "wt", (t / "wt/sub/.dm_cc",))


def test_the_working_directory_itself_may_be_the_root(tree):
    t = tree("repo/.git", "repo/.dm_cc")
    assert found(t / "repo", t / "home") == (t / "repo", ())


def test_a_dm_cc_that_is_a_file_is_no_project_directory(tree):
    t = tree("repo/.git", "repo/sub/.dm_cc=file")
    assert found(t / "repo/sub", t / "home") == (t / "repo", ())


def test_a_nested_repository_is_its_own_project_and_the_outer_dm_cc_is_named(tree):
    """A submodule, or a `.git` a command made: the enclosing repository's rules do
    not apply there, and the warning says so."""
    t = tree("outer/.git", "outer/.dm_cc", "outer/sub/.git")
    project = find_project(t / "outer/sub", t / "home")
    assert project.root == t / "outer/sub"
    assert project.enclosing == t / "outer/.dm_cc"
    (warning,) = project.warnings()
    assert str(t / "outer/.dm_cc") in warning and "enclosing repository" in warning


# ------------------------------------------------------------- without a repository


def test_without_a_repository_the_outermost_dm_cc_below_home_is_the_root(tree):
    t = tree("home/work/.dm_cc", "home/work/sub/.dm_cc", "home/work/sub/x")
    assert found(t / "home/work/sub/x", t / "home") == (
        t / "home/work", (t / "home/work/sub/.dm_cc",))


def test_the_home_directory_is_never_a_dm_cc_project_for_a_directory_below_it(tree):
    """`~/.dm_cc` does not make the whole home the project (writable in the sandbox)
    for a session started further down."""
    t = tree("home/.dm_cc", "home/proj/.dm_cc", "home/plain")
    assert found(t / "home/proj", t / "home") == (t / "home/proj", ())
    assert found(t / "home/plain", t / "home") == (t / "home/plain", ())


def test_started_in_the_home_directory_it_is_the_root(tree):
    t = tree("home/.dm_cc")
    assert found(t / "home", t / "home") == (t / "home", ())


def test_a_repository_in_the_home_directory_is_the_project_as_git_sees_it(tree):
    """A dotfiles repository in `~`: git says `~/proj` is in it, and so does dm_cc;
    the `.dm_cc/` of `~/proj` is named, not silently taken."""
    t = tree("home/.git", "home/proj/.dm_cc")
    assert found(t / "home/proj", t / "home") == (t / "home", (t / "home/proj/.dm_cc",))


def test_outside_the_home_directory_the_outermost_dm_cc_is_the_root(tree):
    t = tree("srv/app/.dm_cc", "srv/app/tool/.dm_cc")
    assert found(t / "srv/app/tool", t / "home") == (t / "srv/app", (t / "srv/app/tool/.dm_cc",))


def test_nothing_found_the_working_directory_is_the_root(tree):
    t = tree("lonely/dir")
    assert found(t / "lonely/dir", t / "home") == (t / "lonely/dir", ())


def test_the_warning_names_the_ignored_directory_and_the_root(tree):
    t = tree("repo/.git", "repo/sub/.dm_cc")
    (warning,) = find_project(t / "repo/sub", t / "home").warnings()
    assert warning.startswith(f"{t / 'repo/sub/.dm_cc'}/ is ignored")
    assert f"the project root is {t / 'repo'}" in warning
