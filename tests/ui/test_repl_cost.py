"""/cost in the real REPL against Anthropic's Messages API on loopback: the second
request of a session reads the first one's prompt from the cache, and /cost says so."""

from __future__ import annotations

import pytest
from support.anthropic_server import serve
from support.model_server import text
from support.repl_driver import ENTER, drive

from dm_cc.compose import Options

pytestmark = pytest.mark.usefixtures("litellm_imported")
READY = "/help lists commands"


def test_cost_shows_the_cache_reads_of_the_second_request(project, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy")
    script = [text("First answer.", usage=(30, 4), cache=(0, 2000)),
              text("Second answer.", usage=(25, 6), cache=(2000, 60))]
    with serve(script) as server:
        options = Options(model="anthropic/claude-sonnet-4-5", api_base=server.base_url)
        run = drive(project, None, [(READY, "/cost" + ENTER), ("cost $", "one" + ENTER),
                                  ("First answer.", "/cost" + ENTER),
                                  ("cost $", "two" + ENTER),
                                  ("Second answer.", "/cost" + ENTER), ("cost $", "")],
                    options=options)
    assert not run.errors and run.code == 0
    costs = [line for line in run.screen.splitlines() if line.startswith("tokens:")]
    assert costs[0] == "tokens: 0 in, 0 out; cost $0.0000"     # nothing cached, nothing said
    assert costs[1].startswith("tokens: 2030 in, 4 out; cache: 0 read, 2000 written; cost $")
    assert costs[2].startswith("tokens: 4115 in, 10 out; cache: 2000 read, 2060 written; cost $")
    assert "cache: 2000 read, 2060 written" in run.screen.splitlines()[-1]   # the goodbye line
    # the toolbar (80 columns): the policy makes room for what was cached
    assert " · policy: built-in defaults · 2.0k tokens · $0.0" in run.screen
    assert " · sandbox: " in run.screen and " · 4.1k tokens · 2.0k cached · $0.0" in run.screen
    assert "cache_control" in server.bodies[1]["messages"][0]["content"][0]   # the 1st prompt
