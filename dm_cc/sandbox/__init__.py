"""The sandbox: the policy the gate judged, held by the kernel (DESIGN.md §8).

:mod:`spec` is the spec as data and its ``bwrap`` command line; :mod:`derive`
computes the spec from a gate (``spec_for``: pure, tested without bubblewrap),
with :mod:`screen` (which project paths a rule could match, from the indexes of
the project's :mod:`tree`) and :mod:`git` (what makes git run commands);
:mod:`machine` reads what it is derived from on this machine (the tree, the git
directories, paths outside the project); :mod:`host` is a session's sandbox: its
mode, whether bubblewrap works here, its private TMPDIR, and a command's plan.
:mod:`seccomp` keeps confined commands off Unix sockets; :mod:`proxy` and
:mod:`inside` hold per-host network rules.
"""
