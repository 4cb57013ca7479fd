"""Time from starting `dm_cc` to a prompt ready to type, against `dm_cc --version`.

Target: the interactive prompt is ready to type in at most 1.5x the time
`dm_cc --version` takes to print its line, measured in the same run.

Both run through one harness: the installed `dm_cc` console script (what a person
types) in a real 120x40 pseudo-terminal, from a throwaway project (a temp dir with
`.git/`), DM_CC_HOME a fresh temp dir, DM_CC_MODEL unset, `--model scripted:FILE`
(no network, no litellm). The master side is read until the awaited output shows;
prompt_toolkit's cursor-position requests (ESC[6n) are answered at once. Times run
from just before Popen until, in the escape-stripped output:

  prompt ready  - the prompt `dm_cc>`: drawn by dm_cc.ui.early before prompt_toolkit
                  is imported; from then on keys are echoed and kept (the REPL
                  reads them as the start of the first message);
  line editor   - prompt_toolkit has taken over the line (it turns bracketed paste
                  on: ESC[?2004h), for information;
  loaded        - the welcome line "/help lists commands" (session, policy and
                  tools are loaded in a thread behind the prompt);
  --version     - its `dm_cc X.Y.Z` line.

The REPL then gets Ctrl-D (its process group is killed if it has not exited in
5 s). Runs are paired (each round times both, in turn) and the verdict uses the
median of the per-round ratios, so a machine that drifts moves both sides alike.
`python -c "import litellm"` is timed once, for scale: the prompt must not wait
for it.

    python benchmarks/bench_repl_start.py [--runs N]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

TARGET = 1.5
CPR_REQUEST, CPR_ANSWER = b"\x1b[6n", b"\x1b[1;1R"
ESCAPES = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")
PROMPT = re.compile(rb"[\w-]+>")  # `dm_cc>` until the session is loaded, then `<agent>>`
WELCOME = re.compile(re.escape(b"/help lists commands"))
EDITOR = re.compile(re.escape(b"\x1b[?2004h"))  # bracketed paste on: prompt_toolkit is reading
RAW = {"editor"}  # marks looked for in the output with its escape sequences
VERSION = re.compile(rb"dm_cc \d\S*\r?\n")


def in_pty(command: list[str], cwd: Path, env: dict[str, str],
           marks: dict[str, re.Pattern[bytes]], timeout: float = 30.0) -> dict[str, float]:
    """Seconds from just before Popen until each mark appears in the (escape-stripped)
    output; then Ctrl-D, and the process group killed if it lingers past 5 s."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=slave, stdout=slave,
                            stderr=slave, start_new_session=True)
    os.close(slave)
    seen: dict[str, float] = {}
    output = b""

    def pump(wait: float) -> None:
        nonlocal output
        if not select.select([master], [], [], wait)[0]:
            return
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child has gone and closed the terminal
            data = b""
        if not data:
            return
        now = time.perf_counter()
        answered = output.count(CPR_REQUEST)
        output += data
        for _ in range(output.count(CPR_REQUEST) - answered):
            os.write(master, CPR_ANSWER)
        text = ESCAPES.sub(b"", output)
        for name, pattern in marks.items():
            if name not in seen and pattern.search(output if name in RAW else text):
                seen[name] = now - start

    try:
        deadline = start + timeout
        while len(seen) < len(marks) and time.perf_counter() < deadline:
            exited = proc.poll() is not None
            pump(0.05)
            if exited:   # what it wrote before exiting has been read
                break
        if proc.poll() is None:
            os.write(master, b"\x04")
        deadline = time.perf_counter() + 5
        while proc.poll() is None and time.perf_counter() < deadline:
            pump(0.05)   # keep draining (and answering) so it can exit
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        os.close(master)
    missing = set(marks) - set(seen)
    if missing:
        tail = ESCAPES.sub(b"", output)[-500:].decode(errors="replace")
        sys.exit(f"{' '.join(command)}: never saw {', '.join(sorted(missing))}; output:\n{tail}")
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    dm_cc = shutil.which("dm_cc") or sys.exit("dm_cc is not on PATH (activate the venv)")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp, "project")
        (project / ".git").mkdir(parents=True)
        script = Path(tmp, "script.yaml")
        script.write_text("- {text: hi}\n")
        env = {**os.environ, "DM_CC_HOME": str(Path(tmp, "home"))}
        env.pop("DM_CC_MODEL", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode is cached
        runs = {"version": ([dm_cc, "--version"], {"version": VERSION}),
                "repl": ([dm_cc, "--model", f"scripted:{script}"],
                         {"prompt": PROMPT, "editor": EDITOR, "loaded": WELCOME})}
        for command, marks in runs.values():  # warm the OS cache and .pyc files first
            in_pty(command, project, env, marks)
        times: dict[str, list[float]] = {"version": [], "prompt": [], "editor": [], "loaded": []}
        for round_ in range(args.runs):  # paired: both once per round, in turn
            env["DM_CC_HOME"] = str(Path(tmp, f"home{round_}"))  # a fresh home each round
            for command, marks in runs.values():
                for name, value in in_pty(command, project, env, marks).items():
                    times[name].append(value)
        litellm_env = {**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        start = time.perf_counter()
        imported = subprocess.run([sys.executable, "-c", "import litellm"], env=litellm_env,
                                  capture_output=True).returncode == 0
        litellm = time.perf_counter() - start

    def ms(values: list[float]) -> str:
        return f"min {min(values) * 1000:7.1f} ms   median {statistics.median(values) * 1000:7.1f} ms"

    ratios = [p / v for p, v in zip(times["prompt"], times["version"], strict=True)]
    loaded = [lo / v for lo, v in zip(times["loaded"], times["version"], strict=True)]
    ratio = statistics.median(ratios)
    print(f"dm_cc = {dm_cc}, {args.runs} paired rounds, in a 120x40 pty\n")
    print(f"  {'dm_cc --version (line printed)':<36} {ms(times['version'])}")
    print(f"  {'dm_cc: prompt ready':<36} {ms(times['prompt'])}   "
          f"({ratio:.2f}x --version, median of paired ratios)")
    editor = [e / v for e, v in zip(times["editor"], times["version"], strict=True)]
    print(f"  {'dm_cc: line editor live':<36} {ms(times['editor'])}   "
          f"({statistics.median(editor):.2f}x --version, for information)")
    print(f"  {'dm_cc: session loaded (welcome)':<36} {ms(times['loaded'])}   "
          f"({statistics.median(loaded):.2f}x --version, for information)")
    label = 'python -c "import litellm" (once)'
    print(f"  {label:<36} {litellm * 1000:7.1f} ms"
          + ("" if imported else "   (import FAILED: litellm not installed?)"))
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"\nprompt ready / --version: {ratio:.2f}x (target: at most {TARGET}x) -> {verdict}")


if __name__ == "__main__":
    main()
