"""The toolbox over streamable HTTP on loopback, shared by the MCP tests."""

from __future__ import annotations

import pytest
from support.mcp_servers import start_http_toolbox


@pytest.fixture(scope="session")
def http_url():
    server, url = start_http_toolbox()
    try:
        yield url
    finally:
        server.terminate()
        server.wait(10)
