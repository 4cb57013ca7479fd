"""What a confined command wrote outside the project, seen by the sandbox itself
(:mod:`dm_cc.sandbox.outside`): in a transaction the home directory, /tmp and the
directory holding the project are scratch copies whose writes are recorded and
dropped. The real case first -- ``git push`` to a bare remote next to the project,
whose error never said "read-only" -- with real bubblewrap; then the choices
(areas, mounts, caches, the summary) as data."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from support.bwrap import needs_bwrap
from support.sandbox_projects import RULES, Project, rule

from dm_cc.permissions import PathContextDirs
from dm_cc.sandbox import Change, Mount, Plan, SandboxSpec, wait_removed
from dm_cc.sandbox import outside as scratch
from dm_cc.sandbox.outside import binds, discarded, scratch_areas, summary
from dm_cc.tools.bash import Ran, run_plan

GIT = ("git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "safe.directory=*")


def confined(project: Project, command: str, policy: str = "") -> tuple[Ran, Plan]:
    """``command`` run as the bash tool runs it: a transaction, confined; the plan is
    finished by the caller (its view is gone then)."""
    if policy:
        project.policy(policy)
    sandbox = project.sandbox()
    assert sandbox.transactional, sandbox.transactions().reason
    plan = sandbox.confine(project.gate(), ["bash", "-c", command], transaction=True)
    return asyncio.run(run_plan(plan, project.root, 30)), plan


@pytest.fixture
def pushed(tmp_path: Path) -> tuple[Project, Path]:
    """A project with one commit, and a bare remote beside it (``origin``)."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    project = Project(tmp_path, tmp_path / "project")
    subprocess.run([*GIT, "init", "-q"], cwd=project.root, check=True)
    (project.root / "a.txt").write_text("a\n")
    subprocess.run([*GIT, "add", "a.txt"], cwd=project.root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "one"], cwd=project.root, check=True)
    subprocess.run([*GIT, "remote", "add", "origin", str(remote)], cwd=project.root, check=True)
    return project, remote


@needs_bwrap
def test_a_push_to_a_local_remote_is_seen_though_it_said_nothing_of_it(pushed):
    project, remote = pushed
    ran, plan = confined(project, "git push origin HEAD:main")
    try:
        assert ran.code == 0 and "[new branch]" in ran.text     # it "worked", in its view
        stopped = plan.stopped(ran.text, ran.code)
    finally:
        plan.finish()
    assert stopped is not None and stopped.seen
    assert stopped.why.startswith(
        "it wrote outside the project, where the sandbox keeps no write: "
        f"{remote}/objects (")
    assert stopped.why.endswith(f"{remote}/refs/heads/main; none of it happened")
    refs = subprocess.run(["git", "-C", str(remote), "for-each-ref"], capture_output=True,
                          text=True, check=True).stdout
    assert refs == ""                                            # nothing reached it
    assert wait_removed(30)
    assert not list(project.sandbox().transactions_dir.iterdir())


@needs_bwrap
def test_caches_go_unsaid_and_a_read_only_path_elsewhere_is_read_from_its_error(tmp_path):
    project = Project(tmp_path)
    cache = project.home / ".cache" / "tool"
    ran, plan = confined(project, f"mkdir -p {cache} && echo x > {cache}/entry")
    try:
        assert ran.code == 0 and plan.stopped(ran.text, ran.code) is None
    finally:
        plan.finish()
    assert not cache.exists()
    ran, plan = confined(project, "touch /usr/dm_cc-probe")      # no scratch area there
    try:
        stopped = plan.stopped(ran.text, ran.code)
    finally:
        plan.finish()
    assert "Read-only file system" in ran.text
    assert stopped is not None and not stopped.seen
    assert stopped.why.startswith("it wrote outside the writable paths")


@needs_bwrap
def test_a_directory_an_edit_rule_opens_is_written_for_real(tmp_path):
    project = Project(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    ran, plan = confined(project, f"echo x > {shared}/out.txt", RULES([
        rule("edit", f"{shared}/**", "allow"), rule("external_directory", f"{shared}/**",
                                                    "allow")]))
    try:
        assert ran.code == 0, ran.text
        assert plan.stopped(ran.text, ran.code) is None
    finally:
        plan.finish()
    assert (shared / "out.txt").read_text() == "x\n"


# ---------------------------------------------------------------------- the choices, as data

@pytest.fixture
def overlays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file system takes an overlay (the probe is the kernel's to answer)."""
    monkeypatch.setattr(scratch, "_overlays", lambda area, directory: True)


def where(root: str = "/home/u/code/app", home: str = "/home/u") -> PathContextDirs:
    from dm_cc.config.dirs import HostFilesystem

    return PathContextDirs(Path(root), Path(root), Path(home), HostFilesystem())


def test_areas_are_the_outermost_unless_a_mount_lies_between(overlays, tmp_path):
    home = tmp_path / "home"                   # under /tmp, as pytest's tmp_path is
    code = home / "code"
    (code / "app").mkdir(parents=True)
    at = where(str(code / "app"), str(home))
    spec = SandboxSpec(cwd="/")
    assert scratch_areas(spec, at, tmp_path, mounts=["/"]) == ("/tmp",)
    # the code directory another file system: an area of its own, bound over /tmp's
    assert scratch_areas(spec, at, tmp_path, mounts=["/", str(code)]) == ("/tmp", str(code))
    # a path the spec mounts itself (an edit rule opens the home): no area in it
    opened = SandboxSpec(cwd="/", writable=(Mount(str(home), "rule"),))
    assert scratch_areas(opened, at, tmp_path, mounts=["/", str(code)]) == ("/tmp",)
    assert scratch_areas(spec, where("/tmp/app", "/"), tmp_path, mounts=["/"]) == ("/tmp",)


def test_mounts_below_an_area_are_bound_again_read_only_after_it():
    spec = SandboxSpec(cwd="/", hidden=(Mount("/home/u/.ssh", "read rule"),))
    mounts = ["/", "/home", "/home/u/nfs", "/home/u/nfs/deeper", "/home/u/.ssh", "/tmp",
              "/home/u/code"]
    args = binds(["/home/u", "/home/u/code"], ["/v/0", "/v/1"], spec, mounts)
    assert args == ["--bind", "/v/0", "/home/u",              # outermost first
                    "--bind", "/v/1", "/home/u/code",
                    "--ro-bind-try", "/home/u/nfs", "/home/u/nfs"]   # with what is below it


def test_what_is_said_leaves_caches_out_and_names_places_not_files():
    made = [("/tmp", Change("x/remote.git/objects/8a", "created", "directory")),
            ("/tmp", Change("x/remote.git/objects/8a/f00d", "created", "file", 12)),
            ("/tmp", Change("x/remote.git/objects/9b", "created", "directory")),
            ("/tmp", Change("x/remote.git/refs/heads/main", "created", "file", 41)),
            ("/home/u", Change(".gitconfig", "modified", "file", 9)),
            ("/home/u", Change(".cache/pip/http/1", "created", "file", 9))]
    kept = discarded(made, ["/home/u/.cache"])
    assert len(kept) == 5
    assert summary(kept, "/home/u") == ("/tmp/x/remote.git/objects (3 changes), "
                                        "/tmp/x/remote.git/refs/heads/main, ~/.gitconfig")
    many = [("/tmp", Change(f"f{n}", "created", "file")) for n in range(8)]
    assert summary(many, "/home/u").endswith("/tmp/f4 and 3 more places")


def test_the_mount_table_is_read_unescaped(tmp_path):
    table = tmp_path / "mountinfo"
    table.write_text("22 1 0:21 / / rw - ext4 /dev/root rw\n"
                     "23 22 0:22 / /mnt/my\\040disk rw - ext4 /dev/sdb rw\n")
    assert scratch.mount_points(str(table)) == ["/", "/mnt/my disk"]
    assert scratch.mount_points(str(tmp_path / "none")) == []
