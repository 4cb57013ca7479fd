"""MCP servers as tools: the only part of dm_cc that imports the ``mcp`` SDK.

    names.py      mcp__<server>__<tool>: sanitised names, collisions refused (pure)
    stdio.py      a stdio server's process: its own process group, killed whole
    connection.py one server's session: start, list tools, call, stop, restart
    manager.py    every server of a session, in one thread with its own event loop
    tools.py      each server tool as a dm_cc Tool (gated like any other)

Nothing here is imported until a command needs MCP servers (``dm_cc run``, the
REPL, ``dm_cc mcp …``): ``dm_cc --help`` and ``dm_cc policy …`` never load the
SDK. See docs/mcp.md.
"""
