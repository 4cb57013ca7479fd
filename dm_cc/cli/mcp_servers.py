"""``dm_cc mcp list|trust|untrust`` — the MCP servers of this project and the user.

``list`` starts every server that may start (a project's only once approved; it
never asks), lists each with where it is defined, whether it is trusted and
running, and its tools with what the agent's gate (``build`` unless ``--agent``)
decides for a call of each with no arguments (a subagent as build's child, with
the read-only tools opened to it as in the loop); then stops them. ``trust NAME``
approves a project's server as it is defined now (saved in the approval store);
``untrust NAME`` forgets it. See docs/mcp.md.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dm_cc.ui import approved_lines, server_lines, server_rows, unapproved_line

DEFAULT_AGENT = "build"

if TYPE_CHECKING:  # the world is imported by the handlers only
    from dm_cc.compose import World


def _world() -> World:
    from dm_cc.compose import open_world

    return open_world()


def _rows(world: World, agent: str) -> list[dict[str, Any]]:
    """Every configured server as a JSON-ready record (starting those that may)."""
    judged = world.agent(agent)  # UsageError naming the known agents, before any server starts
    running = world.start_mcp()
    if running is not None:
        running.start()   # every one, waited for (each within its timeout)
    # a subagent is judged as build's child, as the loop judges it (its parent bounds it)
    gate = world.gate(judged, under=[DEFAULT_AGENT] if judged.mode == "subagent" else [])
    return server_rows(world, running, gate)


def _list(args: argparse.Namespace) -> int:
    world = _world()
    try:
        rows = _rows(world, args.agent)
    finally:
        world.close()
    if args.json:
        print(json.dumps({"agent": args.agent, "servers": rows}, indent=2, ensure_ascii=False))
        return 0
    for line in server_lines(rows):
        print(line)
    return 0


def _trust(args: argparse.Namespace) -> int:
    server = _world().trust_server(args.name, note="approved with `dm_cc mcp trust`")
    for line in approved_lines(server):
        print(line)
    return 0


def _untrust(args: argparse.Namespace) -> int:
    print(unapproved_line(args.name, _world().untrust_server(args.name)))
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser],
             rest: Sequence[str] = ()) -> None:
    group = commands.add_parser(
        "mcp", help="list the MCP servers; trust or untrust a project's server",
        description="The MCP servers of this project and your user config. A project's "
                    "server starts only once you approve its definition (dm_cc mcp trust).")
    sub = group.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True)
    listing = sub.add_parser("list", help="servers, trust, status, tools and their decision",
                             description="Start the servers that may start, list them with "
                                         "their tools and the agent's decision, stop them.")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument("--agent", default=DEFAULT_AGENT,
                         help="judge the tools as this agent (default build)")
    listing.set_defaults(handler=_list)
    trust = sub.add_parser("trust", help="approve a project's server as it is defined now",
                           description="Approve a project-defined MCP server as it is defined "
                                       "now; a changed definition needs approving again.")
    trust.add_argument("name", metavar="NAME", help="the server's name (mcp.servers.NAME)")
    trust.set_defaults(handler=_trust)
    untrust = sub.add_parser("untrust", help="forget the approval of a project's server",
                             description="Forget the approval of a project-defined server.")
    untrust.add_argument("name", metavar="NAME", help="the server's name")
    untrust.set_defaults(handler=_untrust)
