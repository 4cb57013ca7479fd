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

The front door imports host.py (and so the rest): whoever needs a Plan needs it all.
"""

from dm_cc.sandbox.host import Plan, Sandbox, stopped_by_sandbox
from dm_cc.sandbox.repository import git_dirs
from dm_cc.sandbox.spec import Mount, SandboxSpec
from dm_cc.sandbox.transaction import Change, Conflict, Support, Transaction

__all__ = ["Change", "Conflict", "Mount", "Plan", "Sandbox", "SandboxSpec", "Support",
           "Transaction", "git_dirs", "stopped_by_sandbox"]
