"""The sandbox: the policy the gate judged, held by the kernel (DESIGN.md §8).

    spec.py     the spec as data and its ``bwrap`` command line (Mount, SandboxSpec)
    derive.py   the spec from a gate (``spec_for``: pure, tested without bubblewrap),
                with screen.py (which project paths a rule could match, from the
                indexes of the project's tree.py) and git.py (what makes git run commands)
    machine.py  what it is derived from, read on this machine (the tree), with
                repository.py (the project's git dirs, each verified, and core.hooksPath)
    transaction.py  a command run against a copy-on-write view of the project, its
                changes listed and applied one by one (DESIGN.md §8, docs/sandbox.md)
    host.py     a session's sandbox: its mode, whether bubblewrap works here, its
                private TMPDIR, and a command's Plan, which aside.py settles after
                the command (what no mount could hold and git would run, set aside)
    seccomp.py  keeps confined commands off Unix sockets; proxy.py and inside.py
                hold per-host network rules

The front door is lazy: a name's module is imported on its first use, so
``dm_cc policy check``, which needs only ``git_dirs`` (the protected git
directories), loads repository.py and not the sandbox it does not start.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dm_cc.sandbox.host import Plan, Sandbox, stopped_by_sandbox
    from dm_cc.sandbox.repository import git_dirs
    from dm_cc.sandbox.spec import Mount, SandboxSpec
    from dm_cc.sandbox.transaction import Change, Conflict, Support, Transaction, wait_removed

__all__ = ["Change", "Conflict", "Mount", "Plan", "Sandbox", "SandboxSpec", "Support",
           "Transaction", "git_dirs", "stopped_by_sandbox", "wait_removed"]

# Each module of the part and the names of it re-exported here, imported on first
# use (PEP 562): importing the package loads none of them.
_LAZY: dict[str, tuple[str, ...]] = {
    "dm_cc.sandbox.host": ("Plan", "Sandbox", "stopped_by_sandbox"),
    "dm_cc.sandbox.repository": ("git_dirs",),
    "dm_cc.sandbox.spec": ("Mount", "SandboxSpec"),
    "dm_cc.sandbox.transaction": ("Change", "Conflict", "Support", "Transaction",
                                  "wait_removed"),
}

if not TYPE_CHECKING:  # for mypy, the imports above are the names
    _OWNER = {name: module for module, names in _LAZY.items() for name in names}

    def __getattr__(name: str) -> object:
        """``name``, its module imported on first use."""
        module = _OWNER.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        globals()[name] = value  # found once: later lookups do not come here
        return value
