"""What no mount can hold, set aside after a command (dm_cc/sandbox/aside.py):
planned through ``Sandbox.confine`` as the bash tool does, the command's doing
played on the disk, then ``Plan.settle``. Real bwrap runs: test_git_holes.py."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.sandbox_projects import WORKS, Project

from dm_cc.sandbox import Plan, Sandbox


@pytest.fixture
def project(tmp_path) -> Project:
    project = Project(tmp_path)
    shutil.rmtree(project.root / ".git")
    project.git("init", "-q")
    return project


def planned(project: Project) -> Plan:
    sandbox = Sandbox("required", project.world().where, project.env, probe=WORKS)
    plan = sandbox.confine(project.gate(), ["true"])
    for file in plan.pass_files:
        file.close()
    return plan


def kept(project: Project) -> Iterator[Path]:
    """What was set aside, each by its path in the project."""
    store = project.dm_home / "state" / "set-aside"
    return (p.relative_to(p.parent) for p in store.glob("*/*")) if store.exists() else iter(())


def nested(root: Path) -> None:
    (root / "sub").mkdir()
    os.system(f"git init -q {root / 'sub'}")


def test_nothing_made_nothing_said(project):
    plan = planned(project)
    project.files("src/a.py")
    project.git("add", "src/a.py")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    assert plan.settle() is None
    assert list(kept(project)) == []


def test_a_new_repository_is_moved_whole_and_said(project):
    plan = planned(project)
    nested(project.root)
    note = plan.settle()
    assert note is not None and "sub/.git: a git directory" in note
    assert not (project.root / "sub" / ".git").exists() and (project.root / "sub").is_dir()
    assert [p.as_posix() for p in kept(project)] == ["sub"]
    assert plan.settle() is None          # settled: nothing more


def test_a_git_link_put_in_place_of_another_is_set_aside(project, tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (project.root / "sub").mkdir()
    (project.root / "sub" / ".git").symlink_to(tmp_path / "one")
    plan = planned(project)
    (project.root / "sub" / ".git").unlink()
    (project.root / "sub" / ".git").symlink_to(tmp_path / "two")
    assert "sub/.git" in (plan.settle() or "")
    assert not (project.root / "sub" / ".git").is_symlink()


def test_a_directory_that_was_there_loses_only_the_head_it_gained(project):
    project.files("data/objects/keep.txt", "data/notes.md")
    plan = planned(project)
    (project.root / "data" / "HEAD").write_text("ref: refs/heads/main\n")
    assert "data/HEAD" in (plan.settle() or "")
    assert (project.root / "data" / "notes.md").exists()
    assert not (project.root / "data" / "HEAD").exists()


def test_the_root_made_a_bare_repository_loses_its_head(tmp_path):
    project = Project(tmp_path)
    shutil.rmtree(project.root / ".git")
    plan = planned(project)
    os.system(f"git init -q --bare {project.root}")
    assert "HEAD" in (plan.settle() or "")
    assert not (project.root / "HEAD").exists()


def test_a_missing_commondir_made_is_set_aside(project):
    plan = planned(project)
    (project.root / ".git" / "commondir").write_text("/tmp/evil\n")
    assert ".git/commondir" in (plan.settle() or "")
    assert not (project.root / ".git" / "commondir").exists()


def test_a_directory_made_unreadable_is_set_aside(project, monkeypatch):
    """dm_cc runs as the person: a directory it cannot list hides what git, told its
    path (a submodule's, say), still finds. Played here by refusing the listing."""
    plan = planned(project)
    nested(project.root)
    (project.root / "x").mkdir()
    (project.root / "sub").rename(project.root / "x" / "sub")
    real: Callable[..., object] = os.scandir
    hidden = str(project.root / "x")

    def scandir(path: str = ".") -> object:
        if str(path) == hidden:
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr("dm_cc.sandbox.machine.os.scandir", scandir)
    note = plan.settle() or ""
    assert "x: a directory the command made unreadable" in note, note
    assert not (project.root / "x").exists()


def test_what_cannot_be_set_aside_is_said_loudly(project):
    plan = planned(project)
    nested(project.root)
    (project.dm_home / "state").mkdir(parents=True)
    (project.dm_home / "state" / "set-aside").write_text("not a directory")
    note = plan.settle() or ""
    assert "could NOT be set aside" in note and "remove it yourself" in note, note


def test_a_git_config_link_replaced_is_set_aside(project):
    """A mount holds what a link leads to: ``.git/config -> ../shared.cfg`` could be
    removed and written anew inside the writable .git/."""
    config = project.root / ".git" / "config"
    config.rename(project.root / "shared.cfg")
    config.symlink_to("../shared.cfg")
    plan = planned(project)
    config.unlink()
    config.write_text("[core]\n\tfsmonitor = touch /tmp/pwned\n")
    assert ".git/config: a git directory's config" in (plan.settle() or "")
    assert not config.exists()


def test_an_unchanged_git_config_link_is_left_alone(project):
    config = project.root / ".git" / "config"
    config.rename(project.root / "shared.cfg")
    config.symlink_to("../shared.cfg")
    plan = planned(project)
    assert plan.settle() is None and config.is_symlink()
