"""``dm_cc approvals list|add|revoke|clear`` — the project's saved "always allow" answers.

They live in one file per project in the data dir (``dm_cc approvals list`` names
it when there are none). A damaged file is moved aside and reported (exit 2).
None of this imports litellm, mcp or prompt_toolkit.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dm_cc.errors import UsageError

if TYPE_CHECKING:  # the world and the store are imported by the handlers only
    from dm_cc.compose import World
    from dm_cc.session import ApprovalStore, SavedApproval

ADDED_NOTE = "added with `dm_cc approvals add`"


def _world() -> World:
    from dm_cc.compose import open_world

    return open_world()


def _store() -> ApprovalStore:
    """The project's store, found as the World finds it (``World.approvals``) without
    building one: listing, revoking and clearing need no policy, agent or tool, and
    loading those would cost more than reading 10,000 approvals."""
    import os
    from pathlib import Path

    from dm_cc.config import data_dir, find_project, home_dir
    from dm_cc.session import ApprovalStore

    root = find_project(Path(os.getcwd()).resolve(), home_dir(os.environ)).root
    return ApprovalStore.for_project(data_dir(os.environ), root)


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))
    except (OverflowError, OSError, ValueError):  # a hand-edited year 10000
        return f"{seconds:.0f}"


def _shown(text: str) -> str:
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)


def _list(args: argparse.Namespace) -> int:
    from dm_cc.session import SavedApproval

    store = _store()
    approvals = store.list(agent=args.agent)
    if args.json:
        print(SavedApproval.json_list(approvals))
        return 0
    if not approvals:
        whose = f" for agent {args.agent}" if args.agent else ""
        print(f"no saved approvals{whose} ({store.path})")
        return 0
    rows = [("ID", "AGENT", "PERMISSION", "PATTERN", "EXPIRES", "CREATED")]
    rows += [(a.id, a.agent, a.permission, _shown(a.pattern), _when(a.expires), _when(a.created))
             for a in approvals]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1])
    _unused(approvals)
    return 0


def _unused(approvals: Sequence[SavedApproval]) -> None:
    """Entries of a permission whose approvals are never saved (written by an older
    dm_cc, or by hand): listed, never used; say so, and how to remove them."""
    from dm_cc.permissions import NEVER_SAVED

    for approval in approvals:
        if approval.permission in NEVER_SAVED:
            print(f"{approval.id}: not used: {approval.permission} approvals last one session "
                  f"(dm_cc approvals revoke {approval.id} removes it)")


def _check(world: World, permission: str, pattern: str, agent: str) -> None:
    """UsageError unless an approval of ``permission`` ``pattern`` for ``agent`` makes sense."""
    from dm_cc.permissions import path_pattern_problem
    from dm_cc.tools import is_known_permission, known_permissions, language_of

    if not is_known_permission(permission):
        known = ", ".join(sorted(known_permissions()))
        raise UsageError(f"unknown permission {permission!r} (known: {known}, "
                         "or mcp__<server>__<tool>)")
    world.agent(agent)  # UsageError naming the known agents
    if language_of(permission) == "path" and (problem := path_pattern_problem(pattern)):
        raise UsageError(f"bad path pattern {pattern!r}: {problem}")


def _broad(permission: str, pattern: str, force: bool) -> None:
    """A pattern as broad as a whole interpreter (``bash *``, ``*``, ``edit **``) is
    saved only with ``--force``, and then with a warning: UsageError without it."""
    import sys

    from dm_cc.permissions import too_broad
    from dm_cc.tools import language_of

    why = too_broad(pattern, language_of(permission))
    if why is None:
        return
    said = f"allow {permission} {pattern!r} {why}, in every later session of this project"
    if not force:
        raise UsageError(f"{said}. Name what it should allow (e.g. 'bash setup.sh *', "
                         "'python3 -m pytest *', 'src/**'), or pass --force to save it as it is")
    print(f"dm_cc: warning: {said}", file=sys.stderr)


def _add(args: argparse.Namespace) -> int:
    from dm_cc.session import parse_duration

    world = _world()
    _check(world, args.permission, args.pattern, args.agent)
    _broad(args.permission, args.pattern, args.force)
    try:
        expires = time.time() + parse_duration(args.duration) if args.duration else None
        approval = world.approvals.add(args.permission, args.pattern, agent=args.agent,
                                expires=expires, note=ADDED_NOTE)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(approval.id)
    return 0


def _describe(approval: SavedApproval) -> str:
    return f"allow {approval.permission} {approval.pattern!r} for agent {approval.agent}"


def _revoke(args: argparse.Namespace) -> int:
    approval = _store().revoke(args.id)
    print(f"revoked {approval.id}: {_describe(approval)}")
    return 0


def _clear(args: argparse.Namespace) -> int:
    store = _store()
    count = store.clear()
    print(f"removed {count} saved approval{'' if count == 1 else 's'} ({store.path})")
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser],
             rest: Sequence[str] = ()) -> None:
    approvals = commands.add_parser(
        "approvals", help="list, add and revoke saved approvals",
        description="The project's saved \"always allow\" answers. They never beat a "
                    "configured deny, a managed rule or the ceiling.")
    sub = approvals.add_subparsers(dest="approvals_command", metavar="SUBCOMMAND", required=True)
    listing = sub.add_parser("list", help="the live saved approvals, oldest first",
                             description="The live (unexpired) saved approvals, oldest first.")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument("--agent", metavar="AGENT", help="only those of this agent")
    listing.set_defaults(handler=_list)
    add = sub.add_parser("add", help="save an approval; prints its id",
                         description="Save an allow rule for one agent; prints its id.")
    add.add_argument("permission", metavar="PERMISSION", help="e.g. bash, edit, webfetch")
    add.add_argument("pattern", metavar="PATTERN", help="e.g. 'npm test *' or 'src/**'")
    add.add_argument("--agent", default="build", help="the agent it applies to (default build)")
    add.add_argument("--for", dest="duration", metavar="DURATION",
                     help="expire after DURATION (30m, 8h, 1h30m, 7d, 2w); default never")
    add.add_argument("--force", action="store_true",
                     help="save a pattern as broad as a whole interpreter ('bash *', '*', "
                          "'edit **'), which is refused without it")
    add.set_defaults(handler=_add)
    revoke = sub.add_parser("revoke", help="remove one saved approval",
                            description="Remove one saved approval.")
    revoke.add_argument("id", metavar="ID", help="its id (see `dm_cc approvals list`)")
    revoke.set_defaults(handler=_revoke)
    clear = sub.add_parser("clear", help="remove every saved approval of this project",
                           description="Remove every saved approval of this project.")
    clear.set_defaults(handler=_clear)
