"""A small MCP server for the tests, over stdio or streamable HTTP on loopback.

    python toolbox.py stdio [--start-delay SECONDS] [--clash] [--long-name] [--exit-at-start]
                            [--log FILE]

``--log FILE``: each start appends a line to FILE (its pid), before anything else
(before the SDK is imported).
    python toolbox.py http PORT

Tools: echo (read-only), slow, crash (the process exits at once), spawn (starts a
child that sleeps, returns its pid), pid, big (a long answer), fail (an error result),
variable (an environment variable), header (an HTTP request header), write, read
and fetch (a file or a URL: what a server inside the sandbox may touch).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

if __name__ == "__main__" and "--log" in sys.argv:   # first: the SDK takes a while to import
    with open(sys.argv[sys.argv.index("--log") + 1], "a") as log:
        log.write(f"{os.getpid()}\n")

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp_types import ToolAnnotations  # noqa: E402


def build(clash: bool = False, long_name: bool = False) -> MCPServer:
    server = MCPServer("toolbox")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def echo(text: str) -> str:
        """Say the text back."""
        return f"echo: {text}"

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        import anyio

        await anyio.sleep(seconds)
        return "slept"

    @server.tool()
    def crash() -> str:
        """Exit the server at once."""
        os._exit(3)

    @server.tool()
    def spawn() -> str:
        """Start a child process that sleeps; its pid."""
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        return str(child.pid)

    @server.tool()
    def pid() -> str:
        """The server's pid."""
        return str(os.getpid())

    @server.tool()
    def big(size: int) -> str:
        """A long answer."""
        return "x" * size

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise ValueError("it went wrong")

    @server.tool()
    def variable(name: str) -> str:
        """The value of an environment variable ("" when unset)."""
        return os.environ.get(name, "")

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """The value of a header of the HTTP request ("" when unset or not HTTP)."""
        request = ctx.request_context.request
        return request.headers.get(name, "") if request is not None else ""

    @server.tool()
    def write(path: str, text: str) -> str:
        """Write a file: "wrote", or the error (a sandboxed server's writes fail)."""
        try:
            with open(path, "w") as file:
                file.write(text)
        except OSError as exc:
            return f"error: {exc}"
        return "wrote"

    @server.tool()
    def read(path: str) -> str:
        """A file's text, or the error."""
        try:
            with open(path) as file:
                return file.read()
        except OSError as exc:
            return f"error: {exc}"

    @server.tool()
    def fetch(url: str) -> str:
        """GET a URL: its body, or the error."""
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except OSError as exc:
            return f"error: {exc}"

    if long_name:
        @server.tool(name="a" * 60)
        def long() -> str:
            return "long"

    if clash:
        @server.tool(name="get.time")
        def dotted() -> str:
            return "1"

        @server.tool(name="get_time")
        def underscored() -> str:
            return "2"

    return server


def main(argv: list[str]) -> None:
    if "--exit-at-start" in argv:
        print("toolbox: refusing to start", file=sys.stderr)
        sys.exit(1)
    if "--start-delay" in argv:
        time.sleep(float(argv[argv.index("--start-delay") + 1]))
    server = build(clash="--clash" in argv, long_name="--long-name" in argv)
    if argv[0] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
