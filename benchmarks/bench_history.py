"""Session history: `dm_cc sessions list` and `dm_cc run --continue` against a fresh
`dm_cc run`, with 100 and then 1,000 saved sessions of 1,000 messages each.

Target: flat. With the history indexed (``dm_cc/session/session_index.py``), both
commands take about what a fresh run takes (at most 1.2x its time: `--continue`
still reads, in full, the one session it continues) and hardly grow with the
history: 10x the sessions (900 more of 1,000 messages) add at most a quarter of a
fresh run's time to either (the difference of their ratios to the fresh run of the
same rounds; `sessions list` does a little for each session it shows: a `stat`, its
index entry, its line). Before the index, both read every session of every project
in full: at 100 x 1,000 messages, 1.25 s and 1.43 s against 0.28 s for a fresh run
-- 900 more sessions added some 40 fresh runs.

The history is written straight to the session files with the library's message
format (not by real runs: a million messages), spread over four projects, every
tenth session with a subagent's child session. All three commands are timed as
fresh processes (`python -m dm_cc …`, the scripted model: no network, no litellm)
with DM_CC_HOME a temporary dir holding that history:

  fresh      `dm_cc run "hello"` in a project of its own (a new session: reads no
             history; its sessions never become the one --continue picks)
  continue   `dm_cc run --continue "hello"` in the project whose latest session
             has 1,000 messages (it grows by two each round)
  list       `dm_cc sessions list`: every session of every project

The first `dm_cc sessions list` after the history is written builds the index (it
reads every file, as every listing did before): timed once, for scale. Then rounds
are paired (each times fresh, continue and list, in turn) and each verdict uses the
median of the per-round ratios to the fresh run, so a busy machine slows both sides.

    python benchmarks/bench_history.py [--runs N] [--sessions 100,1000] [--messages 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dm_cc.config import data_dir
from dm_cc.session.messages import Message, ToolCall

TARGET_TO_FRESH = 1.2     # list and --continue, against a fresh run
TARGET_GROWTH = 0.25      # what 10x the sessions add, in fresh runs (ratio at 10x - at 1x)
PROJECTS = 4              # the history is spread over this many projects
CHILD_EVERY = 10          # every tenth session has a subagent's child session


def _templates() -> list[dict]:
    """One turn of a conversation (4 messages) as the store writes them."""
    call = ToolCall("call_1", "read", {"path": "src/app/handlers.py"})
    return [m.to_json() for m in (
        Message("user", "Please look at the request handlers and tell me why the login "
                "test fails after the last change."),
        Message("assistant", "Let me read the handlers first.", tool_calls=(call,)),
        Message("tool", "def login(request):\n    user = find(request.form['name'])\n"
                "    if not user or not user.check(request.form['password']):\n"
                "        return deny()\n    return session_for(user)\n",
                tool_call_id="call_1", tool_name="read"),
        Message("assistant", "The handler returns before the session is saved; the test "
                "expects the cookie. Moving the save before the return fixes it."),
    )]


def _line(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def write_history(root: Path, projects: list[Path], sessions: int, messages: int) -> float:
    """``sessions`` session files of ``messages`` messages each (and children), oldest
    first, round-robin over ``projects`` (the last one goes to ``projects[0]``);
    seconds it took."""
    start = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    turn = _templates()
    clock = time.time() - sessions * messages - 3600
    for number in range(sessions):
        project = projects[(number + 1) % len(projects)] if number < sessions - 1 else projects[0]
        session_id = f"ses_{int(clock * 1000):012x}_{number:08x}"
        records = [{"type": "session", "id": session_id, "parent_id": None, "title": "",
                    "project": str(project), "created": clock, "agent": "build"},
                   {"type": "title", "title": f"why does the login test fail ({number})"}]
        for count in range(messages):
            clock += 1
            records.append({"type": "message", **turn[count % len(turn)],
                            "id": f"msg_{number:08x}{count:08x}", "time": clock})
        (root / f"{session_id}.jsonl").write_bytes(b"".join(map(_line, records)))
        if number % CHILD_EVERY == 0:
            child = f"ses_{int(clock * 1000):012x}_c{number:07x}"
            (root / f"{child}.jsonl").write_bytes(b"".join(map(_line, [
                {"type": "session", "id": child, "parent_id": session_id,
                 "title": "find the handlers (@explore)", "project": str(project),
                 "created": clock, "agent": "explore"},
                *({"type": "message", **turn[count % 4], "agent": "explore",
                   "id": f"msg_c{number:07x}{count:08x}", "time": clock + count}
                  for count in range(8))])))
    return time.perf_counter() - start


def seconds(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(base: Path, sessions: int, messages: int, runs: int) -> dict[str, float]:
    """Per-command medians (seconds) and ratios to the fresh run, for one history size."""
    home = base / f"home-{sessions}"
    projects = [base / f"project-{n}" for n in range(PROJECTS)]
    alone = base / "fresh-project"
    for project in (*projects, alone):
        (project / ".git").mkdir(parents=True, exist_ok=True)
    script = base / "script.yaml"
    script.write_text("- text: done\n")
    env = {**os.environ, "DM_CC_HOME": str(home), "DM_CC_MANAGED_DIR": str(base / "managed")}
    env = {k: v for k, v in env.items() if not k.startswith(("DM_CC_MODEL", "OTEL_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    written = write_history(data_dir(env) / "sessions", projects, sessions, messages)
    os.sync()   # on disk, as weeks of history would be: no writeback slows the fsyncs timed
    dm_cc = [sys.executable, "-m", "dm_cc"]
    model = ["--model", f"scripted:{script}"]
    commands = {
        "fresh": (dm_cc + ["run", *model, "hello"], alone),
        "continue": (dm_cc + ["run", "--continue", *model, "hello"], projects[0]),
        "list": (dm_cc + ["sessions", "list"], projects[0]),
    }
    cold = seconds(commands["list"][0], projects[0], env)      # builds the index
    os.sync()
    seconds(commands["fresh"][0], alone, env)                   # warm the .pyc files and caches
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (command, cwd) in commands.items():
            times[name].append(seconds(command, cwd, env))
    figures = {f"{name} s": statistics.median(runs_) for name, runs_ in times.items()}
    for name in ("continue", "list"):
        figures[f"{name} / fresh"] = statistics.median(
            t / f for t, f in zip(times[name], times["fresh"], strict=True))
    print(f"{sessions} sessions x {messages} messages (history written in {written:.1f} s; "
          f"first listing, building the index: {cold:.2f} s)")
    for name in commands:
        ratio = f"  ({figures[name + ' / fresh']:.2f}x fresh)" if name != "fresh" else ""
        print(f"  {name:<9} {figures[name + ' s'] * 1000:7.0f} ms{ratio}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="paired rounds per history size")
    parser.add_argument("--sessions", default="100,1000",
                        help="history sizes, comma-separated (the first is the 1x)")
    parser.add_argument("--messages", type=int, default=1000, help="messages per session")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sessions.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(Path(tmp), size, args.messages, args.runs) for size in sizes]
    verdicts = []
    for name in ("continue", "list"):
        worst = max(result[f"{name} / fresh"] for result in results)
        verdicts.append(worst <= TARGET_TO_FRESH)
        line = f"{name}: at most {worst:.2f}x a fresh run (target: at most {TARGET_TO_FRESH}x)"
        if len(results) > 1:
            growth = results[-1][f"{name} / fresh"] - results[0][f"{name} / fresh"]
            verdicts.append(growth <= TARGET_GROWTH)
            line += (f"; {sizes[-1]} sessions rather than {sizes[0]} add {growth:+.2f} of a "
                     f"fresh run (target: at most {TARGET_GROWTH:+.2f})")
        print(line)
    print(f"medians of {args.runs} paired rounds; verdict: "
          f"{'flat' if all(verdicts) else 'NOT flat'}")


if __name__ == "__main__":
    main()
