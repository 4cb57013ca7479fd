"""The sandbox: the policy the gate judged, held by the kernel (DESIGN.md §8).

:mod:`spec` is the spec as data and its ``bwrap`` command line; :mod:`derive`
computes the spec from a gate (pure, tested without bubblewrap); :mod:`tree` lists
the project for it; :mod:`host` is a session's sandbox: its mode, whether
bubblewrap works here, its private TMPDIR, and a command's plan.
"""
