"""Confined commands run as root and as the unprivileged user ``sbtest``: bubblewrap
works differently for each (as root it needs no user namespace; as ``sbtest`` it
makes one), and the spec must hold for both.

    @pytest.fixture(params=USERS)
    def user(request): return request.param          # None (whoever runs the tests) or "sbtest"

    base = shared_dir()                               # under /tmp, traversable by sbtest
    plan = as_user(plan, user, base, sandbox.private_dir())  # hands the files over, wraps argv

A test as ``sbtest`` needs root and the user (``useradd sbtest``); else it skips.
"""

from __future__ import annotations

import os
import pwd
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from dm_cc.sandbox import Plan

SBTEST = "sbtest"
# The Python another user can run (the tests' own may sit in root's home).
SYSTEM_PYTHON = "/usr/bin/python3"


def _sbtest() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(SBTEST)
    except KeyError:
        return None


CAN_SWITCH = os.geteuid() == 0 and _sbtest() is not None and os.path.exists(SYSTEM_PYTHON)
USERS = (None, pytest.param(SBTEST, marks=pytest.mark.skipif(
    not CAN_SWITCH, reason="needs root and the unprivileged user sbtest to run as them")))


def python_for(user: str | None) -> str:
    return sys.executable if user is None else SYSTEM_PYTHON


def shared_dir() -> Path:
    """A fresh directory under /tmp that another user can traverse (pytest's own
    tmp_path sits under a directory only its owner may enter)."""
    base = Path(tempfile.mkdtemp(prefix="dm_cc-as-user-"))
    os.chmod(base, 0o755)
    return base


def give(user: str, *paths: Path) -> None:
    """Make ``user`` the owner of everything under ``paths``, links themselves."""
    found = _sbtest() if user == SBTEST else pwd.getpwnam(user)
    assert found is not None
    for path in paths:
        for directory, dirs, files in os.walk(path):
            os.lchown(directory, found.pw_uid, found.pw_gid)
            for name in (*dirs, *files):
                os.lchown(os.path.join(directory, name), found.pw_uid, found.pw_gid)


def as_user(plan: Plan, user: str | None, *owned: Path) -> Plan:
    """``plan`` run by ``user`` (None: as is), who is first given ``owned``."""
    if user is None:
        return plan
    give(user, *owned)
    return replace(plan, argv=["runuser", "-u", user, "--", *plan.argv])


def remove(base: Path) -> None:
    shutil.rmtree(base, ignore_errors=True)
