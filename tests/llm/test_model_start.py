"""litellm imported in a background thread (``start_import``): what a first request
still loads after it, and the import racing the main thread's own imports.

Each runs in a fresh interpreter: in a test worker litellm and what its first
request loads are already imported by other tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from support.openai_server import serve, text

from dm_cc.llm.litellm_model import FIRST_USE

TESTS = Path(__file__).resolve().parents[1]

#: Modules a first request must not have to import once the warm-up is done: the
#: OpenAI SDK's resources and types, the mcp SDK and litellm's MCP gateway, the tokenizer.
HEAVY = ("openai.resources", "openai.types", "mcp", "mcp_types", "litellm.responses.mcp",
         "litellm.litellm_core_utils.default_encoding", "tiktoken")


def child(code: str, *, path: Path | None = None, timeout: float = 60) -> str:
    """``code`` run by a fresh interpreter (with ``path`` first on its import path);
    its stdout."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    roots = [str(path)] if path else []
    env["PYTHONPATH"] = os.pathsep.join([*roots, str(TESTS), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, text=True,
                          capture_output=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_after_the_warm_up_a_first_request_loads_nothing_heavy():
    code = """
        import asyncio, json, sys
        from support.model_client import BASH, READ
        from dm_cc.llm import litellm_model
        from dm_cc.session.messages import Message

        litellm_model.start_import()
        litellm_model.start_import()            # once per process
        thread, = litellm_model._started
        thread.join()
        warmed = [name for name in litellm_model.FIRST_USE if name in sys.modules]
        before = set(sys.modules)
        model = litellm_model.LiteLLMModel("openai/test-model", api_base=sys.argv[1])
        reply = asyncio.run(model.complete("s", [Message("user", "hi")], [READ, BASH]))
        print(json.dumps({"text": reply.text, "warmed": warmed,
                          "loaded": sorted(set(sys.modules) - before),
                          "mcp": "mcp" in sys.modules}))
    """
    with serve([text("hello")]) as server:
        out = child(code.replace("sys.argv[1]", repr(server.base_url + "/v1")))
        body = server.bodies[0]
    seen = json.loads(out)
    assert seen["text"] == "hello"
    assert seen["warmed"] == list(FIRST_USE)
    heavy = [name for name in seen["loaded"] if name.startswith(HEAVY)]
    assert heavy == [], f"the first request imported {heavy}: update FIRST_USE"
    # litellm's MCP gateway is skipped: the flag is litellm's own, never sent
    assert not seen["mcp"]
    assert [tool["function"]["name"] for tool in body["tools"]] == ["read", "bash"]
    assert not any("mcp" in key for key in body)


def test_the_import_and_the_main_thread_wait_for_each_others_half_imported_modules(tmp_path):
    """The main thread holds ``held`` half imported when the warm-up's ``import litellm``
    needs it (the import waits for it), then imports ``slow``, which the warm-up's import
    is in the middle of (it waits for that): no deadlock, and neither sees a module
    partly initialised."""
    fake = tmp_path / "litellm"
    fake.mkdir()
    (fake / "__init__.py").write_text("import held, slow\nHELD, SLOW = held.VALUE, slow.VALUE\n")
    (tmp_path / "held.py").write_text(textwrap.dedent("""
        import sys, time
        from dm_cc.llm.litellm_model import start_import
        start_import()               # the warm-up's import of litellm now needs this module
        time.sleep(0.3)
        VALUE = "held"
    """))
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(0.5)\nVALUE = 'slow'\n")
    code = """
        import sys, time
        import held                                # starts the warm-up half way
        while "slow" not in sys.modules:           # the warm-up is inside slow's import
            time.sleep(0.01)
        import slow
        from dm_cc.llm.litellm_model import _import_litellm
        litellm = _import_litellm()
        print(slow.VALUE, litellm.HELD, litellm.SLOW, litellm.suppress_debug_info)
    """
    assert child(code, path=tmp_path, timeout=30).split() == ["slow", "held", "slow", "True"]


def test_a_failed_warm_up_is_not_lost_the_first_use_raises_it(tmp_path):
    fake = tmp_path / "litellm"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "import builtins\nbuiltins.tries = getattr(builtins, 'tries', 0) + 1\n"
        "raise ImportError('litellm is broken here')\n")
    code = """
        import builtins
        from dm_cc.llm import litellm_model
        litellm_model.start_import()
        litellm_model._started[0].join()
        try:
            litellm_model._import_litellm()
        except ImportError as error:
            print(builtins.tries, error)
    """
    # tried by the warm-up, then again at first use, which raises it
    assert child(code, path=tmp_path).strip() == "2 litellm is broken here"


def test_a_session_starts_its_models_warm_up_before_it_makes_the_session(project):
    from dm_cc.compose import open_world
    from dm_cc.core import HeadlessApprover
    from dm_cc.llm.scripted import ScriptedModel, reply
    from dm_cc.session import SessionStore

    happened: list[str] = []

    class Warming(ScriptedModel):
        """A model with a slow first use, as LiteLLMModel."""

        def warm_up(self) -> None:
            happened.append("warm-up")

    class Store(SessionStore):
        def create(self, *args, **kwargs):
            happened.append("session")
            return super().create(*args, **kwargs)

    world = open_world(cwd=project)
    world.sessions = Store(world.sessions.root)     # the cached property, set
    loop = world.open_loop(HeadlessApprover("deny"), model=Warming([reply("hi")]))
    assert happened == ["warm-up", "session"] and loop.session is not None
