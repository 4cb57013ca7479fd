"""Git, as a confined command leaves it for the person's next git command: real
repositories made by real git, real commands in real bubblewrap, run as root and
as the unprivileged user ``sbtest``. The files on disk are checked.

* the git directory is taken only when verified: a ``.git`` file, link or
  ``commondir`` naming a place out of the project opens nothing;
* what makes git run code stays read-only: another worktree's admin files, the
  shared config and hooks, the directory ``core.hooksPath`` names and the scripts
  beside it (husky);
* a git directory a command creates (a nested repository, ``git init`` at a root
  without one) is set aside after the command, and the output says so;
* an agent that may edit nothing in the project writes nothing of its repository.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from support.bwrap import needs_bwrap
from support.sandbox_projects import Project

pytestmark = needs_bwrap

GIT = "git -c user.name=t -c user.email=t@example.com"



@pytest.fixture
def base(shared: Path) -> Path:
    return shared


@pytest.fixture
def project(base: Path) -> Project:
    return Project(base)


def repository(project: Project) -> Project:
    """The project's stand-in ``.git`` replaced by a real repository, one commit in."""
    shutil.rmtree(project.root / ".git")
    project.git("init", "-q", "-b", "main")
    project.files("a.txt")
    project.git("add", "a.txt")
    project.git("commit", "-qm", "first")
    return project


def worktrees(base: Path) -> tuple[Project, Path]:
    """A repository in ``base/main`` with two linked worktrees, ``base/project`` (the
    project) and ``base/other``; and the repository's git dir."""
    main = Project(base, base / "main")
    main.files("a.txt")
    main.git("init", "-q", "-b", "main")
    main.git("add", "a.txt")
    main.git("commit", "-qm", "first")
    main.git("worktree", "add", "-q", "-b", "mine", str(base / "project"))
    main.git("worktree", "add", "-q", "-b", "theirs", str(base / "other"))
    return Project(base, base / "project"), (base / "main" / ".git").resolve()


def tried(*paths: Path | str) -> str:
    """A command that tries to append to each path, printing WROTE for each success."""
    return "; ".join(f"(echo x >> '{path}') 2>/dev/null && echo 'WROTE {path}'" for path in paths)


def snapshot(*paths: Path) -> dict[Path, bytes | None]:
    return {path: path.read_bytes() if path.exists() else None for path in paths}


# --------------------------------------------------------------------------- class 1: verified git dirs

@pytest.mark.parametrize("gitdir", ["..", "/", "HOME"])
def test_a_git_file_naming_a_place_out_of_the_project_opens_nothing(project, user, gitdir):
    """``gitdir: ..`` made the project's parent writable, ``gitdir: /`` the whole
    machine; the command still runs, the place stays read-only, the spec says why."""
    shutil.rmtree(project.root / ".git")
    target = str(project.home) if gitdir == "HOME" else gitdir
    (project.root / ".git").write_text(f"gitdir: {target}\n")
    (project.tmp / "outside").mkdir()
    spec = project.spec()
    assert any("not writable in the sandbox" in note for note in spec.notes), spec.notes
    ran = project.run(tried(project.tmp / "outside" / "x", project.home / "x", project.tmp / "x")
                      + "; echo RAN", user=user)
    assert "RAN" in ran.text and "WROTE" not in ran.text, ran.text
    assert not (project.tmp / "outside" / "x").exists()
    assert not (project.home / "x").exists() and not (project.tmp / "x").exists()


@pytest.mark.parametrize("common", ["/", "HOME", "PARENT"])
def test_a_commondir_naming_a_place_out_of_the_project_opens_nothing(project, user, common):
    """A worktree's admin dir (pointing back at the project, as git makes it) whose
    ``commondir`` names ``/``, the home directory or the project's parent."""
    shutil.rmtree(project.root / ".git")
    admin = project.tmp / "fake" / "worktrees" / "project"
    admin.mkdir(parents=True)
    (admin / "HEAD").write_text("ref: refs/heads/main\n")
    (admin / "gitdir").write_text(f"{project.root}/.git\n")
    named = {"/": "/", "HOME": str(project.home), "PARENT": str(project.tmp)}[common]
    (admin / "commondir").write_text(f"{named}\n")
    (project.root / ".git").write_text(f"gitdir: {admin}\n")
    (project.tmp / "outside").mkdir()
    ran = project.run(tried(project.tmp / "outside" / "x", project.home / "x",
                            admin / "x", project.tmp / "fake" / "x") + "; echo RAN", user=user)
    assert "RAN" in ran.text and "WROTE" not in ran.text, ran.text
    assert not (admin / "x").exists() and not (project.home / "x").exists()


def test_a_git_link_out_of_the_project_opens_nothing(project, user):
    shutil.rmtree(project.root / ".git")
    elsewhere = project.tmp / "elsewhere"
    for name in ("objects", "refs"):
        (elsewhere / name).mkdir(parents=True)
    (elsewhere / "HEAD").write_text("ref: refs/heads/main\n")
    (elsewhere / "config").write_text("[core]\n")
    (project.root / ".git").symlink_to(elsewhere)
    ran = project.run(tried(elsewhere / "x", elsewhere / "objects" / "x") + "; echo RAN", user=user)
    assert "RAN" in ran.text and "WROTE" not in ran.text, ran.text


def test_a_linked_worktree_verified_both_ways_commits_in_the_sandbox(base, user):
    project, common = worktrees(base)
    ran = project.run(f"{GIT} commit -q --allow-empty -m second && echo COMMITTED", user=user)
    assert "COMMITTED" in ran.text, ran.text
    assert project.git("log", "-1", "--format=%s", "mine") == "second\n"


def test_an_admin_dir_that_does_not_point_back_opens_nothing(base, user):
    """The admin dir of another worktree (its ``gitdir`` names that worktree, not this
    project) is not this project's: named by a ``.git`` file, it stays read-only."""
    project, common = worktrees(base)
    (project.root / ".git").write_text(f"gitdir: {common}/worktrees/other\n")
    ran = project.run(tried(common / "objects" / "x", common / "worktrees" / "other" / "x")
                      + "; echo RAN", user=user)
    assert "RAN" in ran.text and "WROTE" not in ran.text, ran.text


def test_a_submodule_checkout_commits_in_the_sandbox(base, user):
    """A submodule's work tree as the project: its git dir, in the superproject's
    ``.git/modules``, names the project back (``core.worktree``)."""
    library = Project(base, base / "library")
    library.files("lib.txt")
    library.git("init", "-q", "-b", "main")
    library.git("add", "lib.txt")
    library.git("commit", "-qm", "lib")
    top = Project(base, base / "top")
    top.git("init", "-q", "-b", "main")
    top.git("submodule", "add", "-q", str(library.root), "sub")
    project = Project(base, base / "top" / "sub")
    ran = project.run(f"{GIT} commit -q --allow-empty -m second && echo COMMITTED", user=user)
    assert "COMMITTED" in ran.text, ran.text


def test_a_modules_link_in_the_shared_git_dir_opens_nothing(base, user):
    """A link made in the (writable) shared git dir, ``modules -> elsewhere``, never
    turns a repository elsewhere into a writable submodule git dir."""
    project, common = worktrees(base)
    victim = base / "victim" / "repo"
    for name in ("objects", "refs"):
        (victim / name).mkdir(parents=True)
    (victim / "HEAD").write_text("ref: refs/heads/main\n")
    (victim / "config").write_text("[core]\n")
    sandbox = project.sandbox()
    made = project.run(f"ln -s '{base / 'victim'}' '{common / 'modules'}' && echo MADE",
                       user=user, sandbox=sandbox)
    assert "MADE" in made.text and "set aside" in made.text, made.text
    assert not (common / "modules").is_symlink()
    (common / "modules").symlink_to(base / "victim")       # as if it had stayed
    ran = project.run(tried(victim / "x", victim / "objects" / "x") + "; echo RAN", user=user,
                      sandbox=sandbox)
    assert "RAN" in ran.text and "WROTE" not in ran.text, ran.text


@pytest.mark.parametrize("made", ["modules/evil", "worktrees/project/modules/a/evil"])
def test_a_submodule_git_dir_a_command_makes_in_the_shared_git_dir_is_set_aside(base, user, made):
    """Outside the project's tree: the main worktree's submodules (``<common>/modules``)
    and this worktree's (in its own admin dir), which ``git status`` enters."""
    project, common = worktrees(base)
    path = common / made
    ran = project.run(f"mkdir -p '{path}/objects' '{path}/refs' && "
                      f"echo 'ref: refs/heads/main' > '{path}/HEAD' && "
                      f"printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > '{path}/config' "
                      "&& echo MADE", user=user)
    assert "MADE" in ran.text and "set aside" in ran.text and made in ran.text, ran.text
    assert not path.exists()


# --------------------------------------------------------------------------- class 2a: another worktree's files

def test_other_worktrees_admin_files_and_the_shared_config_are_read_only(base, user):
    project, common = worktrees(base)
    other = common / "worktrees" / "other"
    own = common / "worktrees" / "project"
    guarded = snapshot(other / "HEAD", other / "commondir", other / "gitdir", other / "index",
                       other / "config.worktree", common / "config", common / "HEAD",
                       common / "index", common / "hooks" / "pre-commit",
                       own / "commondir", own / "gitdir", own / "config.worktree")
    ran = project.run(tried(*guarded) + f"; {GIT} commit -q --allow-empty -m second "
                      "&& echo COMMITTED", user=user)
    assert "COMMITTED" in ran.text, ran.text
    assert "WROTE" not in ran.text.replace(f"WROTE {own / 'config.worktree'}", ""), ran.text
    assert snapshot(*guarded) == guarded        # own/config.worktree made: set aside after
    assert project.git("log", "-1", "--format=%s", "mine") == "second\n"


def test_from_the_main_worktree_linked_worktrees_admin_files_are_read_only(base, user):
    _, common = worktrees(base)
    main = Project(base, base / "main")
    other = common / "worktrees" / "other"
    guarded = snapshot(other / "HEAD", other / "commondir", other / "gitdir",
                       other / "config.worktree", other / "index")
    ran = main.run(tried(*guarded) + f"; {GIT} commit -q --allow-empty -m second "
                   "&& echo COMMITTED", user=user)
    assert "COMMITTED" in ran.text and "WROTE" not in ran.text, ran.text
    assert snapshot(*guarded) == guarded


# --------------------------------------------------------------------------- class 2b: core.hooksPath

HUSKY_WRAPPER = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n'


def test_husky_hooks_and_the_scripts_they_run_are_read_only(project, user):
    """husky v9: ``core.hooksPath=.husky/_``, whose wrappers run ``.husky/<hook>``."""
    repository(project)
    project.git("config", "core.hooksPath", ".husky/_")
    project.files(".husky/_/h", ".husky/pre-commit", ".husky/_/pre-commit")
    (project.root / ".husky" / "_" / "pre-commit").write_text(HUSKY_WRAPPER)
    guarded = snapshot(*(project.root / ".husky" / name for name in (
        "pre-commit", "post-checkout", "_/h", "_/pre-commit", "_/post-merge")))
    ran = project.run(tried(*guarded) + "; echo RAN", user=user)
    assert "RAN" in ran.text and "WROTE" not in ran.text, ran.text
    assert snapshot(*guarded) == guarded


def test_a_deeper_hooks_path_keeps_its_top_directory_read_only(project, user):
    repository(project)
    project.git("config", "core.hooksPath", "tools/git/hooks")
    project.files("tools/git/hooks/pre-commit", "tools/git/run-checks.sh", "src/a.py")
    guarded = snapshot(*(project.root / name for name in (
        "tools/git/hooks/pre-commit", "tools/git/run-checks.sh", "tools/git/hooks/pre-push")))
    ran = project.run(tried(*guarded) + "; echo ok >> src/a.py && echo EDITED", user=user)
    assert "EDITED" in ran.text and "WROTE" not in ran.text, ran.text
    assert snapshot(*guarded) == guarded


def test_a_hooks_directory_a_command_makes_where_git_looks_is_set_aside(project, user):
    repository(project)
    project.git("config", "core.hooksPath", ".githooks")
    ran = project.run("mkdir -p .githooks && echo 'touch /tmp/pwned' > .githooks/pre-commit "
                      "&& chmod +x .githooks/pre-commit && echo MADE", user=user)
    assert "MADE" in ran.text, ran.text
    assert not (project.root / ".githooks").exists()
    assert "set aside" in ran.text and ".githooks" in ran.text, ran.text


def test_a_config_file_the_repository_includes_cannot_be_written_or_made(project, user):
    """``git config include.path ../.gitconfig``: the included file is git config as
    much as .git/config is; a missing one git skips, until a command makes it."""
    repository(project)
    project.git("config", "--add", "include.path", "../.gitconfig")
    project.git("config", "--add", "include.path", "../.gitconfig.local")
    (project.root / ".gitconfig").write_text("[core]\n")
    ran = project.run(tried(project.root / ".gitconfig") + "; printf '[core]\\n\\tfsmonitor = "
                      "touch /tmp/pwned\\n' > .gitconfig.local && echo MADE", user=user)
    assert "MADE" in ran.text and "WROTE" not in ran.text, ran.text
    assert (project.root / ".gitconfig").read_text() == "[core]\n"
    assert not (project.root / ".gitconfig.local").exists()
    assert "set aside" in ran.text and ".gitconfig.local" in ran.text, ran.text


# --------------------------------------------------------------------------- class 2c: git dirs a command makes

def set_aside(project: Project) -> list[Path]:
    store = project.dm_home / "state" / "set-aside"
    return sorted(store.rglob("*")) if store.exists() else []


@pytest.mark.parametrize("command", [
    "mkdir sub && git init -q sub && git -C sub config core.fsmonitor 'touch /tmp/pwned'",
    "git clone -q . sub",
    "mkdir -p sub/.git && echo 'ref: refs/heads/main' > sub/.git/HEAD && "
    "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > sub/.git/config && "
    "mkdir sub/.git/objects sub/.git/refs",
    "mkdir sub && git init -q --bare sub/x.git",
    "mkdir sub && git init -q --separate-git-dir \"$TMPDIR/g\" sub",
    "mkdir sub && git init -q \"$TMPDIR/g\" && ln -s \"$TMPDIR/g/.git\" sub/.git",
], ids=["init-and-config", "clone", "by-hand", "bare", "separate-git-dir", "link"])
def test_a_repository_a_command_creates_in_the_project_is_set_aside(project, user, command):
    repository(project)
    ran = project.run(f"{command} && echo MADE", user=user)
    assert "MADE" in ran.text, ran.text
    assert "set aside" in ran.text and "sub/" in ran.text, ran.text
    leftovers = [p for p in (project.root / "sub").rglob("*")
                 if p.name == ".git" or (p / "HEAD").exists()]
    assert leftovers == [], leftovers
    assert set_aside(project)                   # kept, never deleted


@pytest.mark.parametrize("command", [
    "git init -q",
    "git init -q --separate-git-dir \"$TMPDIR/g\"",
    "mkdir .git && echo 'ref: refs/heads/main' > .git/HEAD && mkdir .git/objects .git/refs && "
    "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config",
    "git init -q \"$TMPDIR/g\" && ln -s \"$TMPDIR/g/.git\" .git",
], ids=["init", "separate-git-dir", "by-hand", "link"])
def test_git_init_at_a_root_without_git_is_set_aside(project, user, command):
    shutil.rmtree(project.root / ".git")
    project.files("a.txt")
    ran = project.run(f"{command} && echo MADE", user=user)
    assert "MADE" in ran.text, ran.text
    assert not (project.root / ".git").exists() and not (project.root / ".git").is_symlink()
    assert "set aside" in ran.text and ".git" in ran.text, ran.text
    assert set_aside(project)


def test_a_repository_hidden_behind_an_mtime_set_back_is_set_aside(project, user):
    """``touch -d @OLD`` puts a directory's mtime back after ``git init`` in it: the
    listing dm_cc kept for it must not be taken as still true."""
    repository(project)
    project.files("lib/x.py")
    time.sleep(0.1)                             # lib's listing is old enough to be kept
    ran = project.run('m=$(stat -c %.9Y lib) && git init -q lib && '
                      'git -C lib config core.fsmonitor "touch /tmp/pwned" && '
                      'touch -m -d "@$m" lib && echo MADE', user=user)
    assert "MADE" in ran.text and "lib/.git" in ran.text, ran.text
    assert not (project.root / "lib" / ".git").exists()


def test_repositories_that_were_there_before_are_left_alone(project, user):
    repository(project)
    (project.root / "vendor").mkdir()
    project.git("init", "-q", "vendor/lib")
    ran = project.run(f"git status --short >/dev/null && {GIT} commit -q --allow-empty -m two "
                      "&& git -C vendor/lib status --short >/dev/null && echo FINE", user=user)
    assert "FINE" in ran.text and "set aside" not in ran.text, ran.text
    assert (project.root / "vendor" / "lib" / ".git" / "HEAD").exists()
    assert set_aside(project) == []


# --------------------------------------------------------------------------- class 2d: read-only agents

def test_the_plan_agent_cannot_write_the_repository_through_a_shared_git_dir(base, user):
    project, common = worktrees(base)
    before = project.git("rev-parse", "mine")
    ran = project.run(tried(common / "objects" / "x", common / "worktrees" / "project" / "x")
                      + f"; {GIT} commit -q --allow-empty -m sneaky && echo COMMITTED",
                      gate=project.gate("plan"), user=user)
    assert "WROTE" not in ran.text and "COMMITTED" not in ran.text, ran.text
    assert project.git("rev-parse", "mine") == before


def test_the_plan_agent_cannot_write_its_own_git_dir(project, user):
    repository(project)
    before = project.git("rev-parse", "HEAD")
    ran = project.run(tried(project.root / ".git" / "x") + f"; {GIT} commit -q --allow-empty "
                      "-m sneaky && echo COMMITTED", gate=project.gate("plan"), user=user)
    assert "WROTE" not in ran.text and "COMMITTED" not in ran.text, ran.text
    assert project.git("rev-parse", "HEAD") == before
