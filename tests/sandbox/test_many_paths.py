"""Many hidden and protected paths (issue 26): a transaction holds those inside the
project without a mount each (dm_cc/sandbox/mask.py) -- a hidden file reads empty
from one extra overlay layer, what the command writes at a hidden or read-only path
is discarded -- so a project with thousands of them starts like any; where commands
do not run as transactions, a spec needing more mounts than bubblewrap makes
quickly is refused, clearly, instead of failing. Real bubblewrap, as the owner and
as the unprivileged ``sbtest``."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.as_user import as_user, remove
from support.bwrap import needs_bwrap
from support.sandbox_projects import WORKS, Project

from dm_cc.sandbox.host import MOUNT_LIMIT, Sandbox
from dm_cc.sandbox.machine import TreeLister
from dm_cc.sandbox.mask import Held
from dm_cc.sandbox.spec import Mount
from dm_cc.sandbox.tree import Entry, Tree
from dm_cc.tools.bash import run_plan

HIDDEN = 1_000
REPOS = 1_000


def _many(project: Project) -> None:
    """1,000 ``.env`` files across a vendored tree, and 1,000 nested repositories (a
    directory with a ``.git`` holding a config: files, no git init)."""
    for n in range(HIDDEN):
        place = project.root / "vendor" / f"p{n}"
        place.mkdir(parents=True)
        (place / ".env").write_text(f"SECRET{n}")
        (place / "index.js").write_text("ok")
    for n in range(REPOS):
        git = project.root / "repos" / f"r{n}" / ".git"
        (git / "hooks").mkdir(parents=True)
        (git / "config").write_text("[core]\n")
        (git / "HEAD").write_text("ref: refs/heads/main\n")


@pytest.fixture
def memory() -> Iterator[Path]:
    """A directory another user may enter, in memory where there is one: thousands of
    files are made and removed in milliseconds there, in seconds on a slow disk."""
    base = Path(tempfile.mkdtemp(prefix="dm_cc-many-",
                                 dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    os.chmod(base, 0o755)
    yield base
    remove(base)


@needs_bwrap
def test_thousands_of_hidden_and_protected_paths_start_and_stay_held(memory, user):
    shared = memory
    project = Project(shared)
    _many(project)
    sandbox = project.sandbox()
    assert sandbox.transactional, sandbox.transactions().reason
    gate = project.gate()
    full = sandbox.spec(gate, transaction=True)
    assert len(full.hidden) >= HIDDEN and len(full.read_only) >= REPOS   # as many held
    script = ("cat vendor/p7/.env; cat vendor/p999/.env; echo EOF; cat vendor/p7/index.js; echo; "
              "chmod u+w vendor/p7/.env; echo planted > vendor/p7/.env; rm -f vendor/p8/.env; "
              "echo evil > repos/r5/.git/config; echo evil > repos/r9/.git/hooks/pre-commit; "
              "echo fine > vendor/p7/new.txt")
    plan = sandbox.confine(gate, ["bash", "-c", script], transaction=True)
    assert plan.transaction is not None and plan.spec is not None
    assert len(plan.spec.mounts()) < 40      # none per hidden or held path
    plan = as_user(plan, user, shared, sandbox.private_dir())
    ran = asyncio.run(run_plan(plan, project.root, 60))
    assert ran.code == 0, ran.text
    assert ran.text.startswith("EOF\nok\n"), ran.text       # hidden: read empty
    assert "SECRET" not in ran.text
    changes = plan.transaction.changes(ignore=plan.mount_points().__contains__)
    held = {c.path for c in changes if plan.held_why(c.path)}
    assert {"vendor/p7/.env", "vendor/p8/.env", "repos/r5/.git/config",
            "repos/r9/.git/hooks/pre-commit"} <= held
    assert "vendor/p7/new.txt" not in held             # an ordinary change is judged
    assert "hides it" in (plan.held_why("vendor/p7/.env") or "")
    assert "read-only" in (plan.held_why("repos/r5/.git/config") or "")
    stopped = plan.stopped(ran.text, ran.code)
    assert stopped is not None and stopped.seen and "vendor/p7/.env" in stopped.why
    plan.finish()
    assert (project.root / "vendor" / "p7" / ".env").read_text() == "SECRET7"
    assert (project.root / "vendor" / "p8" / ".env").exists()
    assert (project.root / "repos" / "r5" / ".git" / "config").read_text() == "[core]\n"


def test_without_transactions_too_many_mounts_is_refused_clearly_and_may_escape(tmp_path):
    project = Project(tmp_path)
    project.files(*(f"vendor/p{n}/.env" for n in range(MOUNT_LIMIT + 10)), "a.txt")
    sandbox = Sandbox("auto", project.world().where, project.env, probe=WORKS)
    plan = sandbox.confine(project.gate(), ["bash", "-c", "true"])      # not a transaction
    assert plan.refusal is not None and plan.refusal_escapable and plan.escapable
    assert f"{MOUNT_LIMIT + 10:,} hidden" in plan.refusal
    required = Sandbox("required", project.world().where, project.env, probe=WORKS)
    assert not required.confine(project.gate(), ["bash", "-c", "true"]).escapable
    few = Project(tmp_path / "few")
    few.files(*(f"vendor/p{n}/.env" for n in range(20)))
    plan = Sandbox("auto", few.world().where, few.env, probe=WORKS).confine(
        few.gate(), ["bash", "-c", "true"])
    assert plan.refusal is None and plan.confined


def test_a_mask_is_built_once_per_set_of_hidden_paths(tmp_path):
    root = tmp_path / "p"
    (root / "a").mkdir(parents=True)
    os.chmod(root / "a", 0o750)
    one = Held(str(root), (Mount(f"{root}/a/.env", "r", False), Mount(f"{root}/s", "r", True)))
    layer = one.layer(tmp_path / "masks")
    assert layer is not None
    assert (layer / "a" / ".env").stat().st_size == 0
    assert os.getxattr(layer / "s", "user.overlay.opaque") == b"y"
    assert (layer / "a").stat().st_mode & 0o777 == 0o750      # as the real directory
    again = Held(str(root), tuple(reversed(one.hidden)))
    assert again.layer(tmp_path / "masks") == layer            # the same paths: reused
    other = Held(str(root), (Mount(f"{root}/a/.env.local", "r", False),))
    assert other.layer(tmp_path / "masks") != layer           # a new hidden file: its own
    assert Held(str(root)).layer(tmp_path / "masks") is None


SEGMENTS = st.sampled_from(["a", "b", ".env", ".git", "config"])
PATHS = st.lists(SEGMENTS, min_size=1, max_size=4).map("/".join)


@given(hidden=st.lists(PATHS, max_size=6), read_only=st.lists(PATHS, max_size=6), path=PATHS)
def test_what_is_held_is_every_change_at_or_under_a_held_path(hidden, read_only, path):
    root = "/p"
    held = Held(root, tuple(Mount(f"{root}/{h}", "h", True) for h in hidden),
                tuple(Mount(f"{root}/{r}", "r", True) for r in read_only))
    under = [p for p in hidden + read_only if path == p or path.startswith(p + "/")]
    assert (held.why(path) is not None) == bool(under)


def test_a_spec_derived_again_after_a_planted_file_hides_it(tmp_path):
    """The spec is kept while the tree holds; a ``.env`` a command leaves is a change
    of its directory, so the next command's spec hides it."""
    project = Project(tmp_path)
    project.files("api/a.py")
    sandbox = Sandbox("auto", project.world().where, project.env, probe=WORKS)
    gate = project.gate()
    first = sandbox.spec(gate, transaction=True)
    assert project.path("api/.env.local") not in {m.path for m in first.hidden}
    (project.root / "api" / ".env.local").write_text("planted")
    second = sandbox.spec(gate, transaction=True)
    assert project.path("api/.env.local") in {m.path for m in second.hidden}
    assert sandbox._split(second)[1].why("api/.env.local") is not None


def test_held_paths_need_no_mount_point(tmp_path: Path):
    project = Project(tmp_path)
    project.files(".env", "src/.env.local", ".envrc")
    sandbox = Sandbox("auto", project.world().where, project.env, probe=WORKS)
    spec, held = sandbox._split(sandbox.spec(project.gate(), transaction=True))
    root = project.root.as_posix()
    assert not [m for _, m in spec.mounts() if m.path.startswith(root + "/")]
    assert held.why(".env") and held.why("src/.env.local") and held.why(".envrc")
    assert held.why(".git/config") and held.why(".git/hooks/pre-commit")


NAMES = st.sampled_from(["a", "A", "b", "é", ".git", "Hooks", "hooks"])


@given(paths=st.lists(st.lists(NAMES, min_size=1, max_size=4), max_size=12),
       directory=st.lists(st.sampled_from(["a", "b", "é", ".git", "hooks"]), min_size=1,
                          max_size=3))
def test_folded_under_is_the_casefolded_prefix_of_every_path(paths, directory):
    """The tree's directory lookup (no sort of the whole tree) against the plain
    definition: the ASCII paths whose casefolded form is the directory or under it."""
    listed: dict[str, bool] = {}
    for parts in paths:
        for at in range(1, len(parts) + 1):
            path = "/".join(parts[:at])
            listed[path] = listed.get(path, False) or at < len(parts)
    tree = Tree.of(tuple(Entry(path, is_dir) for path, is_dir in sorted(listed.items())))
    wanted = "/".join(directory)
    reference = sorted((p.casefold(), p) for p in listed if p.isascii()
                       and (p.casefold() == wanted or p.casefold().startswith(wanted + "/")))
    assert tree.folded_under(wanted) == [p for _, p in reference]


@needs_bwrap
def test_what_no_mount_holds_is_read_once_while_the_tree_holds(tmp_path, monkeypatch):
    """The check after a command (dm_cc/sandbox/aside.py) reads each repository's files
    again only when a directory of the project changed: a thousand repositories cost
    no thousand ``lstat``s per command -- and a repository made by the next command is
    still set aside."""
    from dm_cc.sandbox import aside

    project = Project(tmp_path)
    for n in range(50):
        (project.root / "repos" / f"r{n}" / ".git" / "hooks").mkdir(parents=True)
        (project.root / "repos" / f"r{n}" / ".git" / "config").write_text("[core]\n")
    sandbox = project.sandbox()
    gate = project.gate()
    (project.root / ".dm_cc").mkdir()      # made before the first command otherwise
    time.sleep(TreeLister.RACY_NS / 1e9)   # a listing as old as its directories is kept
    plan = sandbox.confine(gate, ["bash", "-c", "true"])
    assert asyncio.run(run_plan(plan, project.root, 30)).code == 0
    counted: list[str] = []
    real = aside.identity
    monkeypatch.setattr(aside, "identity", lambda path: counted.append(path) or real(path))
    plan = sandbox.confine(gate, ["bash", "-c", "true"])          # nothing changed since
    assert asyncio.run(run_plan(plan, project.root, 30)).code == 0
    assert len(counted) < 10, counted               # not one per repository's file
    plan = sandbox.confine(gate, ["bash", "-c", "cd repos/r3 && mkdir -p sub/.git/objects "
                                                "sub/.git/refs && echo 'ref: refs/heads/x' > "
                                                "sub/.git/HEAD"])
    ran = asyncio.run(run_plan(plan, project.root, 30))       # it settles the plan
    assert ran.code == 0 and "repos/r3/sub/.git: a git directory" in ran.text, ran.text
    assert not (project.root / "repos" / "r3" / "sub" / ".git").exists()
