"""Time from starting `dm_cc run` with a litellm model to its first model request,
against `python -c "import litellm"`.

Target: `dm_cc run --model openai/x --api-base http://127.0.0.1:PORT/v1 "hi"`
gets its first request to the server in at most 1.1x the time a process takes
to `import litellm`, measured in the same run. litellm's import is most of a
litellm run's start (seconds); dm_cc imports it in a thread as soon as the
session knows its model (dm_cc.llm.litellm_model.start_import), with what
litellm's first request would load, while the session, tools and policy load.

What is timed, each a fresh process from a throwaway project (a temp dir with
`.git/`), DM_CC_HOME and DM_CC_MANAGED_DIR fresh temp dirs, and
LITELLM_LOCAL_MODEL_COST_MAP=True in the environment of all of them:

  import litellm: exit  - the reference: `python -c "import litellm"`, from just
                          before Popen to its exit (Python's own teardown of
                          litellm's modules included: a third of it);
  import litellm: done  - the same process, to the moment its import was done
                          (it writes the monotonic clock): the stricter reference;
  dm_cc run: first req  - `python -m dm_cc run --model openai/x --api-base ... hi`,
                          until the loopback server (tests/support/openai_server.py)
                          has read the first chat completion request;
  dm_cc run: exit       - the same run, until it exits (the answer printed);
  litellm alone: first  - for scale: a script that imports litellm and sends one
                          streamed request with a tool, as a peer would, until it
                          arrives;
  dm_cc run scripted    - for scale: `--model scripted:FILE` (no litellm), to exit.

Each ratio is the median of per-round ratios over paired rounds (every process
once a round, in turn), so a machine that drifts moves both sides alike. The
verdict is against the process (the target's terms); the figure against its
import alone is printed beside it.

    python benchmarks/bench_model_start.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.model_server import serve  # noqa: E402
from support.openai_server import OpenAIWire, text  # noqa: E402

TARGET = 1.1
# `import litellm`, then the moment it was done on the clock this script reads
# (CLOCK_MONOTONIC, one for every process): sys and time are loaded at start-up.
REFERENCE = "import litellm, sys, time; sys.stdout.write(repr(time.perf_counter()))"
LITELLM_ALONE = """
import asyncio, sys, litellm
TOOL = {"type": "function", "function": {"name": "read", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
async def main():
    stream = await litellm.acompletion(
        model="openai/x", api_base=sys.argv[1], api_key="sk-dummy", stream=True,
        messages=[{"role": "user", "content": "hi"}], tools=[TOOL],
        stream_options={"include_usage": True})
    async for _ in stream:
        pass
asyncio.run(main())
"""


class _TimedWire(OpenAIWire):
    """The OpenAI wire, noting when each streamed completion request has been read."""

    def __init__(self) -> None:
        self.arrived: list[float] = []
        self.lock = threading.Lock()

    def streams(self, path: str, body: Any) -> bool:
        with self.lock:
            self.arrived.append(time.perf_counter())
        return super().streams(path, body)

    def first_since(self, start: float) -> float | None:
        with self.lock:
            later = [moment for moment in self.arrived if moment >= start]
        return min(later) - start if later else None


def _run(command: list[str], cwd: Path, env: dict[str, str],
         wire: _TimedWire | None = None) -> tuple[float, float | None]:
    """(seconds to exit, seconds to the first request, or to the moment the
    process wrote on stdout, or None)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, check=True, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    ended = time.perf_counter() - start
    if wire is not None:
        return ended, wire.first_since(start)
    return ended, (float(done.stdout) - start if command[-1] == REFERENCE else None)


def _project(tmp: Path) -> tuple[Path, dict[str, str]]:
    project = tmp / "project"
    (project / ".git").mkdir(parents=True)
    (tmp / "script.yaml").write_text("replies:\n  - {text: hello}\n")
    env = {**os.environ, "DM_CC_HOME": str(tmp / "home"),
           "DM_CC_MANAGED_DIR": str(tmp / "managed"), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for name in ("DM_CC_MODEL", "DM_CC_API_BASE", "OPENAI_API_KEY", "LITELLM_LOG"):
        env.pop(name, None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode is cached
    return project, env


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    args = parser.parse_args()
    python = sys.executable
    wire = _TimedWire()
    with tempfile.TemporaryDirectory() as name, serve([text("hello")] * 10_000, wire) as server:
        tmp = Path(name)
        project, env = _project(tmp)
        api = server.base_url + "/v1"
        dm_cc = [python, "-m", "dm_cc", "run", "--model", "openai/x", "--api-base", api, "hi"]
        commands = {
            "reference": [python, "-c", REFERENCE],
            "dm_cc": dm_cc,
            "alone": [python, "-c", LITELLM_ALONE, api],
            "scripted": [python, "-m", "dm_cc", "run", "--model",
                         f"scripted:{tmp / 'script.yaml'}", "hi"],
        }
        for command in commands.values():   # warm the OS cache and the .pyc files
            _run(command, project, env)
        times: dict[str, list[float]] = {key: [] for key in (
            "imported", "reference", "first", "exit", "alone", "scripted")}
        for _ in range(args.runs):
            ended, imported = _run(commands["reference"], project, env)
            assert imported is not None
            times["reference"].append(ended)
            times["imported"].append(imported)
            ended, first = _run(commands["dm_cc"], project, env, wire)
            assert first is not None, "dm_cc run sent no request"
            times["first"].append(first)
            times["exit"].append(ended)
            alone = _run(commands["alone"], project, env, wire)[1]
            assert alone is not None, "the litellm script sent no request"
            times["alone"].append(alone)
            times["scripted"].append(_run(commands["scripted"], project, env)[0])
    _report(times, args.runs)


def _report(times: dict[str, list[float]], runs: int) -> None:
    labels = {"imported": 'python -c "import litellm": import done',
              "reference": 'python -c "import litellm": exit',
              "first": "dm_cc run openai/x: first request",
              "exit": "dm_cc run openai/x: exit",
              "alone": "litellm alone: first request",
              "scripted": "dm_cc run scripted: exit"}
    def ratio(key: str, base: str) -> float:
        return statistics.median(t / b for t, b in zip(times[key], times[base], strict=True))

    print(f"  {'':<42} {'median':>10}  {'/ exit':>8} {'/ import':>9}")
    for key, label in labels.items():
        print(f"  {label:<42} {statistics.median(times[key]) * 1000:7.0f} ms  "
              f"{ratio(key, 'reference'):7.2f}x {ratio(key, 'imported'):8.2f}x")
    print(f"\ntime to first request / the import litellm process: "
          f"{ratio('first', 'reference'):.2f}x to its exit, {ratio('first', 'imported'):.2f}x "
          f"to its import done (target: at most {TARGET}x; medians of {runs} paired rounds)")


if __name__ == "__main__":
    main()
