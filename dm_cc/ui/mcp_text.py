"""MCP servers in words: what ``dm_cc mcp list`` prints (and dumps with ``--json``)
and what the REPL's ``/mcp`` shows.

    server_rows(world, running, gate)   every configured server as a JSON-ready
                                        record: origin, trust (and what changed
                                        since approved), status, error, pid, what
                                        it runs as written, the variables it reads
                                        and the files it names, its tools with the
                                        gate's decision for a call with no
                                        arguments, the tools left out
    server_lines(rows)                  those records as text, a few lines each
    approved_lines(server)              what ``dm_cc mcp trust`` and ``/permissions mcp
                                        trust`` say of the server approved
    unapproved_line(name, was)          what ``… untrust`` says

The caller chooses the gate: ``dm_cc mcp list`` builds the one of ``--agent``
(a subagent as build's child), the REPL uses the agent in charge's (its session
approvals included). Plain text only (no prompt_toolkit, no mcp): ``dm_cc mcp``
imports it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dm_cc.compose import World
    from dm_cc.config import ServerDefinition
    from dm_cc.mcp import McpServers
    from dm_cc.permissions import Gate

NONE_CONFIGURED = ("no MCP servers configured (mcp.servers in .dm_cc/config.yaml or your "
                   "config.yaml; docs/mcp.md)")


def server_rows(world: World, running: McpServers | None, gate: Gate) -> list[dict[str, Any]]:
    """Every server of ``world``'s settings (disabled ones too), as it stands in
    ``running`` (what :meth:`World.start_mcp` returned), its tools judged by ``gate``."""
    from dm_cc.tools import entry

    statuses = {s.definition.name: s for s in (running.statuses() if running else [])}
    rows = []
    for server in world.settings.mcp.values():
        status = statuses.get(server.name)
        state = "disabled" if server.disabled else "skipped" if server.broken \
            else status.state if status else "not started"
        tools = []
        for name, original in (status.names.items() if status else ()):
            tool = next((t for t in status.tools if t.name == original), None) if status else None
            if gate.denies_outright(name):
                action, source = "deny", "denied outright"
            else:
                decision = gate.decide(entry(name).requests({}, world.where))
                action = decision.action
                source = ", ".join(v.rule.source for v in decision.deciding)
            tools.append({"name": name, "tool": original, "decision": action, "rule": source,
                          "read_only": bool(tool and tool.annotations
                                            and tool.annotations.read_only_hint)})
        trust = world.mcp_trust(server)
        changes = server.changes(world.approvals.trusted_servers()) \
            if trust == "changed since approved" else []
        rows.append({"name": server.name, "origin": server.origin, "source": server.source,
                     "transport": "" if server.broken else server.transport,
                     "runs": server.where(),
                     "reads": server.references(),
                     "files": [{"path": f.path, "checked": f.checked, "outside": f.outside,
                                "target": f.target}
                               for f in server.files],
                     "facts": server.facts(), "changes": changes,
                     "trust": trust, "status": state,
                     "error": server.broken or (status.error if status else ""),
                     "pid": status.pid if status else None, "tools": tools,
                     "left_out": list(status.left_out) if status else [],
                     "sandbox": _confinement(world, server.transport, status.confined
                                             if status and status.state == "running" else None)})
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


def server_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """Each server: its name, status, trust and where it is defined; what changed
    since it was approved; what it runs, the variables it reads and the files it
    names, and where (the sandbox); its error; the tools left out; each tool with
    its decision; how to approve it when it was not started for want of trust.
    :data:`NONE_CONFIGURED` for none."""
    empty = True
    for row in rows:
        empty = False
        pid = f", pid {row['pid']}" if row["pid"] else ""
        if row["status"] == "skipped":   # its entry is broken: nothing else is known
            yield f"{row['name']}  skipped: its entry is broken  ({row['origin']})"
            yield f"  error: {row['error']}"
            continue
        yield (f"{row['name']}  {row['status']}{pid}  trust: {row['trust']}  "
               f"({row['origin']}, {row['source']})")
        if row["changes"]:
            yield f"  changed since approved: {', '.join(row['changes'])}"
        yield f"  {row['transport']}: {row['runs']}"
        yield from (f"  {fact}" for fact in row["facts"])
        yield f"  sandbox: {row['sandbox']}"
        if row["error"]:
            yield "  error: " + row["error"].replace("\n", "\n    ")
        if row["left_out"]:
            yield f"  left out (names too long for the model): {', '.join(row['left_out'])}"
        for tool in row["tools"]:
            hint = "  read-only" if tool["read_only"] else ""
            yield f"  {tool['name']}  {tool['decision']} ({tool['rule']}){hint}"
        if row["status"] == "not started" and row["trust"] != "user config":
            yield (f"  review it, then approve it with `dm_cc mcp trust {row['name']}` "
                   "(it starts the next time dm_cc does)")
    if empty:
        yield NONE_CONFIGURED


def approved_lines(server: ServerDefinition) -> list[str]:
    """What approving ``server`` did (:meth:`World.trust_server`): the definition
    approved and what it reads, or that one of the person's own needs no approval."""
    if server.origin == "user":
        return [f"{server.name} is defined in your user config ({server.source}): it starts "
                "without approval"]
    return [f"trusted {server.name} as defined at {server.source}: {server.transport} "
            f"{server.where()}", *(f"  {fact}" for fact in server.facts()),
            "  (a change to its definition or to these files makes it unapproved again)"]


def unapproved_line(name: str, was: bool) -> str:
    """What forgetting the approval of the server ``name`` did (``was``: it had one)."""
    return (f"{name} is no longer trusted: it will not start until approved again" if was
            else f"{name} was not trusted")
