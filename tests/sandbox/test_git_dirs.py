"""The project's git directories as read from the machine, each verified before it
shapes the spec (dm_cc/sandbox/repository.py), and what the spec makes of them:
real repositories made by real git, no bubblewrap."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.sandbox_projects import Project, covered, paths

from dm_cc.sandbox import git_dirs
from dm_cc.sandbox.derive import PINNED
from dm_cc.sandbox.git import CONFIG_FILE, HOOKS_PATH, MAIN_WORKTREE, OTHER_WORKTREE, GitDirs
from dm_cc.sandbox.repository import git_config, verified_git_dirs

GIT = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "protocol.file.allow=always"]


def git(*args: str | Path) -> None:
    subprocess.run([*GIT, *map(str, args)], check=True, capture_output=True)


def repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", path)
    (path / "f").write_text("x")
    git("-C", path, "add", "f")
    git("-C", path, "commit", "-qm", "f")
    return path


@pytest.fixture
def linked(tmp_path) -> tuple[Path, Path]:
    """A repository in ``main`` with linked worktrees ``tree`` and ``other``: (the
    worktree ``tree``, the repository's git dir)."""
    main = repository(tmp_path / "main")
    git("-C", main, "worktree", "add", "-q", tmp_path / "tree")
    git("-C", main, "worktree", "add", "-q", tmp_path / "other")
    return tmp_path / "tree", (main / ".git").resolve()


def refused(found: GitDirs) -> str:
    assert len(found.refused) == 1, found
    return found.notes()[0]


# --------------------------------------------------------------------------- verified

def test_a_repository_and_its_linked_worktree_are_verified(tmp_path, linked):
    tree, common = linked
    module = common / "modules" / "lib"
    for name in ("objects", "refs"):
        (module / name).mkdir(parents=True)
    (module / "HEAD").write_text("ref: refs/heads/main\n")
    (module / "config").write_text("")
    home = tmp_path / "home"
    assert verified_git_dirs(tree, home) == GitDirs(
        str(common), str(common / "worktrees" / "tree"), (str(module),),
        (str(common / "worktrees" / "other"),))
    assert verified_git_dirs(tmp_path / "main", home) == GitDirs(
        str(common), None, (str(module),),
        (str(common / "worktrees" / "other"), str(common / "worktrees" / "tree")))
    assert verified_git_dirs(tmp_path / "none", home) == GitDirs()


def test_a_submodule_checkout_is_verified_by_its_core_worktree(tmp_path):
    library = repository(tmp_path / "library")
    top = repository(tmp_path / "top")
    git("-C", top, "submodule", "add", "-q", library, "sub")
    found = verified_git_dirs(top / "sub", tmp_path / "home")
    assert found.common == str((top / ".git" / "modules" / "sub").resolve()), found
    assert found.refused == ()


# --------------------------------------------------------------------------- refused

@pytest.mark.parametrize("named", ["..", "/", "HOME", "../.."])
def test_a_git_file_naming_a_place_out_of_the_project_is_refused(tmp_path, named):
    root, home = tmp_path / "home" / "project", tmp_path / "home"
    root.mkdir(parents=True)
    (root / ".git").write_text(f"gitdir: {home if named == 'HOME' else named}\n")
    found = verified_git_dirs(root, home)
    assert found.dirs() == () and found.owned() == ()
    assert "not writable in the sandbox" in refused(found)


def test_a_git_link_out_of_the_project_is_refused(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    elsewhere = repository(tmp_path / "elsewhere") / ".git"
    (root / ".git").symlink_to(elsewhere)
    found = verified_git_dirs(root, tmp_path / "home")
    assert found.dirs() == ()
    assert str(elsewhere) in refused(found)


def test_a_git_link_inside_the_project_is_the_project_git_dir(tmp_path):
    root = repository(tmp_path / "project")
    (root / ".git").rename(root / ".git-real")
    (root / ".git").symlink_to(".git-real")
    assert verified_git_dirs(root, tmp_path / "home").common == str(root / ".git-real")


@pytest.mark.parametrize("common", ["/", "HOME", "PARENT", "ELSEWHERE"])
def test_a_commondir_naming_a_place_it_cannot_be_is_refused(tmp_path, linked, common):
    tree, real = linked
    admin = real / "worktrees" / "tree"
    named = {"/": "/", "HOME": str(tmp_path), "PARENT": str(tmp_path),
             "ELSEWHERE": str(repository(tmp_path / "else") / ".git")}[common]
    (admin / "commondir").write_text(named + "\n")
    found = verified_git_dirs(tree, tmp_path if common == "HOME" else tmp_path / "home")
    assert found.owned() == (), found
    assert "not writable in the sandbox" in refused(found)


def test_an_admin_dir_must_name_the_project_back(tmp_path, linked):
    tree, common = linked
    (tree / ".git").write_text(f"gitdir: {common}/worktrees/other\n")
    found = verified_git_dirs(tree, tmp_path / "home")
    assert found.owned() == ()
    assert "does not name this project's .git back" in refused(found)


def test_an_admin_dir_must_sit_directly_under_worktrees(tmp_path, linked):
    tree, common = linked
    deeper = common / "worktrees" / "x" / "tree"
    shutil.copytree(common / "worktrees" / "tree", deeper)
    (deeper / "commondir").write_text("../../..\n")
    (tree / ".git").write_text(f"gitdir: {deeper}\n")
    assert "directly under" in refused(verified_git_dirs(tree, tmp_path / "home"))


def test_a_common_dir_must_look_like_a_git_dir(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    admin = tmp_path / "fake" / "worktrees" / "project"
    admin.mkdir(parents=True)
    (admin / "commondir").write_text("../..\n")
    (admin / "gitdir").write_text(f"{root}/.git\n")
    (root / ".git").write_text(f"gitdir: {admin}\n")
    assert "is not a git directory" in refused(verified_git_dirs(root, tmp_path / "home"))


def test_a_common_dir_holding_the_project_is_refused(tmp_path):
    """A repository around the project (a tarball's extra directories), shaped as a
    git dir with a worktree admin dir naming the project back: still refused."""
    outer = tmp_path / "outer"
    for name in ("objects", "refs"):
        (outer / name).mkdir(parents=True)
    (outer / "HEAD").write_text("ref: refs/heads/main\n")
    (outer / "config").write_text("")
    root = outer / "project"
    admin = outer / "worktrees" / "project"
    admin.mkdir(parents=True)
    root.mkdir()
    (admin / "commondir").write_text("../..\n")
    (admin / "gitdir").write_text(f"{root}/.git\n")
    (root / ".git").write_text(f"gitdir: {admin}\n")
    assert "holds the project" in refused(verified_git_dirs(root, tmp_path / "home"))


def test_a_submodule_git_dir_that_does_not_name_the_project_back_is_refused(tmp_path):
    library = repository(tmp_path / "library")
    top = repository(tmp_path / "top")
    git("-C", top, "submodule", "add", "-q", library, "sub")
    other = tmp_path / "other"
    other.mkdir()
    (other / ".git").write_text(f"gitdir: {top}/.git/modules/sub\n")
    assert "core.worktree" in refused(verified_git_dirs(other, tmp_path / "home"))


def test_modules_reached_through_a_link_are_not_submodules(tmp_path, linked):
    tree, common = linked
    victim = repository(tmp_path / "victim") / ".git"
    (common / "modules").mkdir()
    (common / "modules" / "evil").symlink_to(victim)
    assert verified_git_dirs(tree, tmp_path / "home").modules == ()
    (common / "modules").rmdir() if not any((common / "modules").iterdir()) else None
    (common / "modules" / "evil").unlink()
    (common / "modules").rmdir()
    (common / "modules").symlink_to(tmp_path / "victim" / ".git")
    assert verified_git_dirs(tree, tmp_path / "home").modules == ()


def test_the_edit_tools_protect_every_git_dir_the_project_names_verified_or_not(tmp_path, linked):
    """git reads a git dir's config wherever the project's .git says it is: the gate
    protects what the sandbox refuses to open (the front door's ``git_dirs``)."""
    tree, common = linked
    assert git_dirs(tree) == (str(common), str(common / "worktrees" / "tree"))
    (tree / ".git").write_text(f"gitdir: {tmp_path}\n")
    assert git_dirs(tree) == (str(tmp_path),)


# --------------------------------------------------------------------------- the spec

def project_at(tmp_path: Path, root: Path) -> Project:
    return Project(tmp_path, root)


def test_a_refused_git_dir_is_not_writable_and_the_notes_say_why(tmp_path):
    project = Project(tmp_path)
    shutil.rmtree(project.root / ".git")
    (project.root / ".git").write_text("gitdir: /\n")
    spec = project.spec()
    assert {m.path for m in spec.writable if m.why != PINNED} == {
        project.root.as_posix(), spec.env["TMPDIR"]}
    assert any("/, named as the project's git directory" in note for note in spec.notes), \
        spec.notes


def test_the_other_worktrees_files_are_read_only_and_ours_writable(tmp_path, linked):
    tree, common = linked
    spec = project_at(tmp_path, tree).spec()
    read_only = {m.path: m.why for m in spec.read_only}
    assert read_only[f"{common}/worktrees/other"] == OTHER_WORKTREE
    assert read_only[f"{common}/HEAD"] == read_only[f"{common}/index"] == MAIN_WORKTREE
    assert {f"{common}/config", f"{common}/hooks", f"{common}/worktrees/tree/commondir",
            f"{common}/worktrees/tree/gitdir"} <= set(read_only)
    assert covered(f"{common}/objects/ab/x", spec.writable)
    assert covered(f"{common}/worktrees/tree/index", spec.writable)
    assert not covered(f"{common}/worktrees/tree/index", spec.read_only)


def test_from_the_main_worktree_every_linked_worktrees_files_are_read_only(tmp_path, linked):
    _, common = linked
    spec = project_at(tmp_path, tmp_path / "main").spec()
    assert {f"{common}/worktrees/other", f"{common}/worktrees/tree"} <= paths(spec.read_only)
    assert not covered(f"{common}/HEAD", spec.read_only)


def test_an_agent_that_may_edit_nothing_writes_nothing_of_its_repository(tmp_path, linked):
    tree, common = linked
    project = project_at(tmp_path, tree)
    spec = project.spec(project.gate("plan"))
    assert not covered(f"{common}/objects/x", spec.writable), spec.writable
    assert not covered(f"{common}/worktrees/tree/index", spec.writable)
    assert not covered(tree.as_posix() + "/a", spec.writable)
    build = project.spec(project.gate("build"))
    assert covered(f"{common}/objects/x", build.writable)


@pytest.mark.parametrize(("hooks", "top"), [
    (".husky/_", ".husky"), (".husky", ".husky"), ("tools/git/hooks", "tools"),
    (".git/my-hooks", ".git/my-hooks")])
def test_the_top_directory_of_core_hooks_path_is_read_only(tmp_path, hooks, top):
    project = Project(tmp_path)
    shutil.rmtree(project.root / ".git")
    project.git("init", "-q")
    project.git("config", "core.hooksPath", hooks)
    project.files(f"{hooks}/pre-commit", "src/a.py")
    spec = project.spec()
    assert next(m for m in spec.read_only if m.path == project.path(top)).why == HOOKS_PATH
    assert not covered(project.path("src/a.py"), spec.read_only)
    assert not covered(project.path(".git/index"), spec.read_only)     # git's to write


def test_a_hooks_path_holding_the_project_is_said_in_the_notes(tmp_path):
    project = Project(tmp_path)
    shutil.rmtree(project.root / ".git")
    project.git("init", "-q")
    project.git("config", "core.hooksPath", ".")
    spec = project.spec()
    assert any("core.hooksPath" in note for note in spec.notes), spec.notes
    assert covered(project.path("a"), spec.writable)


def test_the_hooks_path_git_names_is_found_as_written_and_where_it_leads(tmp_path):
    git("init", "-q", tmp_path)
    assert git_config(tmp_path, GitDirs(f"{tmp_path}/.git")).hooks_paths == ()
    git("-C", tmp_path, "config", "core.hooksPath", ".husky/_")
    assert git_config(tmp_path, GitDirs(f"{tmp_path}/.git")).hooks_paths == (f"{tmp_path}/.husky/_",)
    (tmp_path / "config" / "husky").mkdir(parents=True)
    os.symlink("config/husky", tmp_path / ".husky")
    assert git_config(tmp_path, GitDirs(f"{tmp_path}/.git")).hooks_paths == (f"{tmp_path}/.husky/_",
                                                f"{tmp_path}/config/husky/_")


def test_the_files_git_reads_as_config_are_found_included_or_not(tmp_path):
    """An include names a file relative to the one including it; git skips a missing
    one (a command could make it), and follows includes in includes."""
    git("init", "-q", tmp_path)
    git("-C", tmp_path, "config", "include.path", "../shared.gitconfig")
    git("-C", tmp_path, "config", "includeIf.onbranch:main.path", "../.gitconfig-main")
    (tmp_path / "shared.gitconfig").write_text("[core]\n\thooksPath = .husky/_\n"
                                                "[include]\n\tpath = tools/more.cfg\n")
    found = git_config(tmp_path, GitDirs(f"{tmp_path}/.git"))
    assert {f"{tmp_path}/.git/config", f"{tmp_path}/shared.gitconfig",
            f"{tmp_path}/.gitconfig-main", f"{tmp_path}/tools/more.cfg"} <= set(found.files)
    assert found.hooks_paths == (f"{tmp_path}/.husky/_",)


@pytest.mark.parametrize("text", ["[core]\n\tautocrlf = false\n", "not config at all"])
def test_a_config_file_included_from_the_tree_is_read_only(tmp_path, text):
    """Valid or not: git refuses all its config while an include does not parse, and
    the file must not become valid config the person's git then runs."""
    project = Project(tmp_path)
    shutil.rmtree(project.root / ".git")
    project.git("init", "-q")
    project.git("config", "core.hooksPath", ".githooks")
    project.git("config", "include.path", "../.gitconfig")
    (project.root / ".gitconfig").write_text(text)
    project.files(".githooks/pre-commit")
    spec = project.spec()
    read_only = {m.path: m.why for m in spec.read_only}
    assert read_only[project.path(".gitconfig")] == CONFIG_FILE
    assert read_only[project.path(".githooks")] == HOOKS_PATH
