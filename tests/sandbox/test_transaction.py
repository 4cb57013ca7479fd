"""A command against a copy-on-write view of the project (dm_cc/sandbox/transaction.py):
run for real in ``unshare -Urm`` with an overlay, as root and as the unprivileged
``sbtest``; what it changed is listed, nothing lands until applied, applying is a
rename that never follows a link, and a change to a path that changed since is a
conflict."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.as_user import CAN_SWITCH, SYSTEM_PYTHON, give

from dm_cc.sandbox import Change, Conflict, Transaction, transaction
from dm_cc.sandbox.transaction import support, wait_removed


@pytest.fixture
def project(shared: Path) -> Path:
    root = shared / "project"
    root.mkdir()
    (root / "kept.txt").write_text("kept\n")
    (root / "changed.txt").write_text("before\n")
    (root / "gone.txt").write_text("gone\n")
    (root / "touched.txt").write_text("same\n")
    (root / "script.sh").write_text("echo hi\n")
    (root / "old").mkdir()
    (root / "old" / "a.txt").write_text("a\n")
    (root / "old" / "deep").mkdir()
    (root / "old" / "deep" / "b.txt").write_text("b\n")
    (root / "redone").mkdir()
    (root / "redone" / "was.txt").write_text("was\n")
    (root / "file_then_dir").write_text("f\n")
    return root


def run(tx: Transaction, script: str, user: str | None, *owned: Path) -> None:
    argv = tx.wrap(["sh", "-c", script])
    if user is not None:
        give(user, *owned)
        argv = ["runuser", "-u", user, "--", *argv]
    done = subprocess.run(argv, cwd=tx.root, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


COMMAND = ("cd \"$PWD\" && echo new > new.txt && echo after > changed.txt && rm gone.txt && "
           "touch touched.txt && chmod +x script.sh && rm -rf old && mkdir -p made/inner && "
           "echo m > made/inner/m.txt && ln -s kept.txt link && rm -rf redone && mkdir redone "
           "&& echo now > redone/now.txt && rm file_then_dir && mkdir file_then_dir && "
           "mkfifo pipe")


def test_what_a_command_changed_is_listed_and_nothing_lands_before_it_is_applied(
        project, shared, user):
    assert support(str(shared / "tx")).usable
    tx = Transaction.begin(project.as_posix(), shared / "tx")
    run(tx, f"cd {project} && {COMMAND}", user, project, shared / "tx")
    changes = {(c.path, c.kind, c.what) for c in tx.changes()}
    assert changes == {
        ("new.txt", "created", "file"), ("changed.txt", "modified", "file"),
        ("gone.txt", "deleted", "file"), ("script.sh", "mode", "file"),
        ("old/a.txt", "deleted", "file"), ("old/deep/b.txt", "deleted", "file"),
        ("old/deep", "deleted", "directory"), ("old", "deleted", "directory"),
        ("made", "created", "directory"), ("made/inner", "created", "directory"),
        ("made/inner/m.txt", "created", "file"), ("link", "created", "link"),
        ("redone/was.txt", "deleted", "file"), ("redone/now.txt", "created", "file"),
        ("file_then_dir", "deleted", "file"), ("file_then_dir", "created", "directory"),
        ("pipe", "special", "other")}
    order = [c.path for c in tx.changes()]
    assert order.index("old/deep/b.txt") < order.index("old/deep") < order.index("old")
    assert order.index("made") < order.index("made/inner") < order.index("made/inner/m.txt")
    # the real project is as it was
    assert (project / "changed.txt").read_text() == "before\n"
    assert (project / "gone.txt").exists() and (project / "old" / "deep" / "b.txt").exists()
    assert not (project / "new.txt").exists() and not (project / "made").exists()
    tx.close()
    assert wait_removed(30)
    assert not tx.base.exists()


def test_applying_makes_each_change_and_keeps_what_was_there_first(project, shared, user):
    tx = Transaction.begin(project.as_posix(), shared / "tx")
    run(tx, f"cd {project} && {COMMAND}", user, project, shared / "tx")
    kept: list[str] = []
    for change in tx.changes():
        if change.kind != "special":
            tx.apply(change, keep=kept.append)
    tx.close()
    assert (project / "new.txt").read_text() == "new\n"
    assert (project / "changed.txt").read_text() == "after\n"
    assert not (project / "gone.txt").exists() and not (project / "old").exists()
    assert os.stat(project / "script.sh").st_mode & stat.S_IXUSR
    assert (project / "made" / "inner" / "m.txt").read_text() == "m\n"
    assert os.readlink(project / "link") == "kept.txt"
    assert sorted(os.listdir(project / "redone")) == ["now.txt"]
    assert (project / "file_then_dir").is_dir() and not (project / "pipe").exists()
    assert "changed.txt" in kept and "old/deep/b.txt" in kept
    assert not any(name.startswith("user.overlay.")
                   for name in os.listxattr(project / "changed.txt"))


def test_a_change_to_a_path_that_changed_since_the_command_started_is_a_conflict(
        project, shared):
    tx = Transaction.begin(project.as_posix(), shared / "tx")
    run(tx, f"cd {project} && echo mine > changed.txt && echo mine > new.txt && "
            "echo mine > kept.txt", None)
    (project / "changed.txt").write_text("theirs\n")       # another writer, meanwhile
    (project / "new.txt").write_text("theirs\n")
    found = {c.path: tx.conflict(c) for c in tx.changes()}
    assert found["changed.txt"] == "it changed after the command started"
    assert found["new.txt"] is not None
    assert found["kept.txt"] is None
    tx.close()


def test_applying_never_follows_a_link_put_in_place_of_a_directory(project, shared, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    tx = Transaction.begin(project.as_posix(), shared / "tx")
    run(tx, f"cd {project} && echo x > old/planted.txt", None)
    (change,) = tx.changes()
    os.rename(project / "old", project / "old.real")
    os.symlink(outside, project / "old")                    # swapped in before applying
    with pytest.raises(Conflict):
        tx.apply(change)
    assert list(outside.iterdir()) == []
    tx.close()


def test_a_change_names_what_it_is():
    assert Change("a", "created", "link", target="b").describe() == "created link a -> b"
    assert Change("d", "deleted", "directory").describe() == "deleted directory d"
    assert Change("p", "special", "other").describe().startswith("made p (a FIFO")


def test_a_directory_the_command_made_unreadable_is_said_not_walked(project, shared):
    """dm_cc runs as the person, who cannot read such a directory either: the listing
    runs as sbtest (the module alone: it needs nothing but the standard library)."""
    if not CAN_SWITCH:
        pytest.skip("needs root and the unprivileged user sbtest")
    tx = Transaction.begin(project.as_posix(), shared / "tx")
    run(tx, f"cd {project} && mkdir -p hid && echo x > hid/.envrc && chmod 000 hid", "sbtest",
        project, shared / "tx")
    module = shared / "transaction_module.py"
    shutil.copy(transaction.__file__, module)
    found = subprocess.run(
        ["runuser", "-u", "sbtest", "--", SYSTEM_PYTHON, "-c",
         "import importlib.util, sys; from pathlib import Path; "
         "spec = importlib.util.spec_from_file_location('t', sys.argv[1]); "
         "t = sys.modules['t'] = importlib.util.module_from_spec(spec); "
         "spec.loader.exec_module(t); "
         "tx = t.Transaction(sys.argv[2], Path(sys.argv[3]), 0); "
         "print([(c.path, c.kind) for c in tx.changes()])",
         str(module), str(project), str(tx.base)],
        capture_output=True, text=True, timeout=30)
    assert found.stdout.strip() == "[('hid', 'created'), ('hid', 'unreadable')]", found.stderr
    tx.close()


def test_on_the_projects_file_system_a_file_lands_by_a_rename_not_a_copy(project, shared,
                                                                          user):
    """What a command wrote is not copied twice (``npm ci``'s files): the upper
    directory beside the project, the file that lands is the very one it wrote."""
    tx = Transaction.begin(project.as_posix(), shared / "tx")
    assert tx.same_fs
    run(tx, f"cd {project} && head -c 65536 /dev/zero > big.bin && echo after > changed.txt",
        user, project, shared / "tx")
    written = {c.path: os.lstat(tx.upper / c.path).st_ino for c in tx.changes()}
    for change in tx.changes():
        tx.apply(change)
    tx.close()
    assert {path: os.lstat(project / path).st_ino for path in written} == written


def test_a_transaction_a_killed_dm_cc_left_is_removed_by_the_next_one(project, shared):
    """What a killed dm_cc's command wrote does not stay in the state directory for
    ever; a transaction another dm_cc still holds, or one just made, stays."""
    directory = shared / "tx"
    began = ("import os, sys; from pathlib import Path; "
             "from dm_cc.sandbox.transaction import Transaction; "
             f"t = Transaction.begin({str(project)!r}, Path({str(directory)!r})); "
             "(t.upper / 'big.bin').write_bytes(bytes(100_000)); print(t.base, flush=True); "
             "os.kill(os.getpid(), 9)")
    killed = subprocess.run([sys.executable, "-c", began], capture_output=True, text=True,
                            timeout=30)
    left = Path(killed.stdout.strip())
    assert killed.returncode == -9 and (left / "upper" / "big.bin").exists(), killed.stderr
    transaction._SWEPT.discard(str(directory))
    live = Transaction.begin(project.as_posix(), directory)        # held by this process
    young = directory / "tx-young"
    young.mkdir()
    old = time.time() - transaction.LEFT_OVER_AFTER - 1
    for path in (left, live.base):
        os.utime(path, (old, old))
    transaction._SWEPT.discard(str(directory))
    after = Transaction.begin(project.as_posix(), directory)
    assert not left.exists()
    assert live.base.exists() and young.exists()
    for tx in (live, after):
        tx.close()
    assert wait_removed(30)
    assert sorted(os.listdir(directory)) == ["tx-young"]


def test_a_closed_transaction_is_removed_after_close_returns_and_held_until_then(
        project, shared, monkeypatch):
    """Removing a view is off the command's path: ``close`` hands it to a thread; until
    that thread removed it, it stays held, so another dm_cc's sweep leaves it alone."""
    import threading

    directory = shared / "tx"
    release = threading.Event()
    remove = transaction._remove
    monkeypatch.setattr(transaction, "_remove",
                        lambda path: (release.wait(30), remove(path)))
    tx = Transaction.begin(project.as_posix(), directory)
    (tx.upper / "written.txt").write_text("w")
    old = time.time() - transaction.LEFT_OVER_AFTER - 1
    os.utime(tx.base, (old, old))
    tx.close()                                    # returns with the removal still to do
    assert tx.base.exists() and not wait_removed(0.2)
    sweep = ("import sys; from pathlib import Path; from dm_cc.sandbox import transaction; "
             "transaction._remove_left_over(Path(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", sweep, str(directory)], capture_output=True,
                          text=True, timeout=30, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              sys.path)})
    assert done.returncode == 0, done.stderr
    assert (tx.base / "upper" / "written.txt").exists()      # held: not another's to take
    release.set()
    assert wait_removed(30)
    assert not tx.base.exists()


def test_a_file_compared_in_listing_lands_with_the_digest_of_what_was_read(project, shared):
    """Listing reads a same-sized file whole to compare it; the sha256 of those bytes goes
    with it when it lands (for undo's record), but only while the file is as it was read."""
    import hashlib

    tx = Transaction.begin(project.as_posix(), shared / "tx")
    run(tx, f"cd {project} && echo AFTER_ > changed.txt && echo SAME > touched.txt "
            "&& echo grown and longer > kept.txt", None)
    changes = {c.path: c for c in tx.changes()}
    assert set(changes) == {"changed.txt", "touched.txt", "kept.txt"}
    (tx.upper / "touched.txt").write_text("SAMe\n")       # after listing: not as it was read
    told: dict[str, object] = {}
    for change in changes.values():
        inode = os.lstat(tx.upper / change.path).st_ino
        tx.apply(change, landed=lambda path, at, known: told.update({path: known}))
        assert os.lstat(project / change.path).st_ino == inode
    assert told == {"changed.txt": (os.lstat(project / "changed.txt").st_ino,
                                    hashlib.sha256(b"AFTER_\n").hexdigest()),
                    "touched.txt": None,       # changed after it was read
                    "kept.txt": None}          # another size: never read in listing
    tx.close()
