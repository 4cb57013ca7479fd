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

from dm_cc.errors import UsageError

DEFAULT_AGENT = "build"

if TYPE_CHECKING:  # the world is imported by the handlers only
    from dm_cc.compose import World
    from dm_cc.config.mcp_servers import ServerDefinition


def _world() -> World:
    from dm_cc.compose import open_world

    return open_world()


def _server(world: World, name: str) -> ServerDefinition:
    servers = world.settings.mcp
    if name not in servers:
        known = ", ".join(servers) or "none is configured (mcp.servers in .dm_cc/config.yaml)"
        raise UsageError(f"no MCP server {name!r} (known: {known})")
    return servers[name]


def _rows(world: World, agent: str) -> list[dict[str, Any]]:
    """Every configured server as a JSON-ready record (starting those that may)."""
    from dm_cc.agents.builtin import with_read_only_tools
    from dm_cc.policy.layers import Link
    from dm_cc.tools.catalog import entry

    world.agent(agent)  # UsageError naming the known agents, before any server starts
    running = world.start_mcp()
    statuses = {s.definition.name: s for s in (running.statuses() if running else [])}
    read_only = [tool.name for tool in (running.tools() if running else []) if tool.read_only]
    agents = with_read_only_tools(world.agents, read_only)
    judged = agents[agent]
    # a subagent is judged as build's child, as the loop judges it (its parent bounds it)
    gate = world.policy.lineage_gate(
        [Link(agents[DEFAULT_AGENT]), Link(judged)] if judged.mode == "subagent"
        else [Link(judged)])
    rows = []
    for server in world.settings.mcp.values():
        trust = world.mcp_trust(server)
        status = statuses.get(server.name)
        state = "disabled" if server.disabled else status.state if status else "not started"
        tools = []
        for name, original in (status.names.items() if status else ()):
            tool = next(t for t in status.tools if t.name == original) if status else None
            if gate.denies_outright(name):
                action, source = "deny", "denied outright"
            else:
                decision = gate.decide(entry(name).requests({}, world.where))
                action = decision.action
                source = ", ".join(v.rule.source for v in decision.deciding)
            tools.append({"name": name, "tool": original, "decision": action, "rule": source,
                          "read_only": bool(tool and tool.annotations
                                            and tool.annotations.read_only_hint)})
        rows.append({"name": server.name, "origin": server.origin, "source": server.source,
                     "transport": server.transport, "runs": server.where(), "trust": trust,
                     "status": state, "error": status.error if status else "",
                     "pid": status.pid if status else None, "tools": tools,
                     "left_out": list(status.left_out) if status else [],
                     "sandbox": _confinement(world, server.transport,
                                             status.confined if status else None)})
    return rows


def _confinement(world: World, transport: str, confined: bool | None) -> str:
    """Where a server runs: inside the sandbox (with what it may write and reach),
    or why not."""
    if transport != "stdio":
        return "not confined: a streamable HTTP server runs elsewhere"
    sandbox = world.sandbox
    if not sandbox.confining:
        return f"unconfined: {sandbox.state()}"
    if confined is False:
        return "unconfined"
    spec = sandbox.spec(world.gate(world.agent(world.settings.default_agent or "build")),
                        server=True)
    project = "writable" if any(m.path == world.root.as_posix() for m in spec.writable) \
        else "read-only"
    started = "confined" if confined else "to be confined"
    return f"{started}: project {project}, network {spec.network}"


def _list(args: argparse.Namespace) -> int:
    world = _world()
    try:
        rows = _rows(world, args.agent)
    finally:
        world.close()
    if args.json:
        print(json.dumps({"agent": args.agent, "servers": rows}, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("no MCP servers are configured (mcp.servers in .dm_cc/config.yaml or the user "
              "config; see docs/mcp.md)")
        return 0
    for row in rows:
        pid = f", pid {row['pid']}" if row["pid"] else ""
        print(f"{row['name']}  {row['status']}{pid}  trust: {row['trust']}  "
              f"({row['origin']}, {row['source']})")
        print(f"  {row['transport']}: {row['runs']}")
        print(f"  sandbox: {row['sandbox']}")
        if row["error"]:
            print("  error: " + row["error"].replace("\n", "\n    "))
        if row["left_out"]:
            print(f"  left out (names too long): {', '.join(row['left_out'])}")
        for tool in row["tools"]:
            hint = "  read-only" if tool["read_only"] else ""
            print(f"  {tool['name']}  {tool['decision']} ({tool['rule']}){hint}")
        if row["status"] == "not started" and row["trust"] != "user config":
            print(f"  review it, then approve it with `dm_cc mcp trust {row['name']}`")
    return 0


def _trust(args: argparse.Namespace) -> int:
    world = _world()
    server = _server(world, args.name)
    if server.origin == "user":
        print(f"{server.name} is defined in your user config ({server.source}): it starts "
              "without approval")
        return 0
    world.approvals.trust_server(server.name, server.fingerprint,
                                 note=f"approved with `dm_cc mcp trust` ({server.source})")
    print(f"trusted {server.name} as defined at {server.source}: {server.transport} "
          f"{server.where()}")
    return 0


def _untrust(args: argparse.Namespace) -> int:
    world = _world()
    if world.approvals.untrust_server(args.name):
        print(f"{args.name} is no longer trusted: it will not start until approved again")
    else:
        print(f"{args.name} was not trusted")
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
