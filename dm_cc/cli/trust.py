"""``dm_cc trust [--show]`` and ``dm_cc untrust`` — whether the person trusts what
this project's own files say (docs/security.md).

``trust`` shows every file not trusted and what it would open, then trusts the
files as they are now (a digest of each, saved with the project's approvals);
``--show`` only shows, and says which files are trusted. ``untrust`` forgets them:
the project's allow rules, agents and settings count for nothing again.
"""

from __future__ import annotations

import argparse
from typing import Any

from dm_cc.config import counted


def register(commands: Any, argv: Any = ()) -> None:
    trust = commands.add_parser(
        "trust", help="trust this project's own dm_cc files as they are now",
        description="Trust the project's .dm_cc/ files (policy, agents, config) as they are "
                    "now: their allow rules then count, within the project. A file that "
                    "changes is untrusted again.")
    trust.add_argument("--show", action="store_true",
                       help="only show the files and what they would open")
    trust.set_defaults(handler=_trust)
    untrust = commands.add_parser(
        "untrust", help="forget that this project's files are trusted",
        description="Forget the trust given to this project's own files: their deny and ask "
                    "rules still apply, nothing they allow does.")
    untrust.set_defaults(handler=_untrust)


def _trust(args: argparse.Namespace) -> int:
    from dm_cc.compose import open_world
    from dm_cc.ui import trust_lines, trusted_lines

    world = open_world()
    trust = world.trust
    if not trust.files:
        print(trusted_lines(world)[0])
        return 0
    if args.show or not trust.pending:
        for line in trust_lines(world) if trust.pending else trusted_lines(world):
            print(line)
        return 0
    lines = trust_lines(world)
    count = world.trust_project(note="trusted with `dm_cc trust`")
    for line in lines:
        print(line)
    print(f"trusted {counted(count, 'file')} of {world.root} as they are now")
    return 0


def _untrust(args: argparse.Namespace) -> int:
    from dm_cc.compose import open_world

    world = open_world()
    count = world.untrust_project()
    print(f"forgot {counted(count, 'trusted file')} of {world.root}" if count
          else f"no file of {world.root} was trusted")
    return 0
