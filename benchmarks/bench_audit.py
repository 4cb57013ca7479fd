"""What the audit log costs (issue 26), each figure against a reference from the same run.

(a) Appending, per call: the log as it was (every record fsynced, then its head
    replaced: ``append`` + ``sync`` per record) against grouped appends (a reply's
    calls written, then one ``sync``) for replies of 1 and of 5 calls; the
    reference is the least a durable per-call log costs: one ``write`` + ``fsync``
    of a line on an open file. Rounds interleaved, medians.
(b) ``AuditLog.verify`` of a 100,000-record log (records of ~650 bytes, as a real
    log's), in process, against a plain loop that reads the JSONL and hashes each
    line with hashlib (and the same loop also parsing each line with json.loads,
    the least a check of ``prev`` and ``seq`` needs). Target: ≤ 1 s per 100k.
(c) Peak RSS (``ru_maxrss`` of the child) of ``dm_cc audit``, ``dm_cc audit --json``
    and ``dm_cc audit verify`` as processes over logs of 10,000 and 100,000 records.
    Target: no growth with the log's length.

The logs are made with the library's own ``encode``/``line_hash``/``Head`` (the
bytes ``append`` writes), not by 100,000 tool calls.

    python benchmarks/bench_audit.py [--records N] [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dm_cc.session.audit import GENESIS, AuditLog, Head, encode, line_hash

RSS_PROBE = ("import resource, subprocess, sys\n"
             "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
             "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def record(number: int) -> dict:
    """A record shaped as the loop writes one (about 650 bytes)."""
    return {"time": "2026-11-26T08:00:00.000Z", "project": "/home/me/app",
            "session": "ses_01jbench0000000000000000", "root_session": "ses_01jbench00000000000000",
            "agent": "build", "subagent": "", "tool": "bash", "call_id": f"call_{number:024d}",
            "input": f"npm run task{number}", "gate": "allow", "decision": "allow",
            "decided_by": "rule", "answer": None, "feedback": None,
            "requests": [{"permission": "bash", "pattern": f"npm run task{number}",
                          "decision": "allow", "rule": {"action": "allow", "permission": "bash",
                                                        "pattern": "npm run *"},
                          "source": ".dm_cc/policy.yaml:12", "reason": "the project's scripts",
                          "layer": "project", "note": None}],
            "pid": 4242}


def write_log(path: Path, count: int) -> None:
    """``count`` chained records and their head, as ``append`` would leave them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    prev, size = GENESIS, 0
    with open(path, "wb") as out:
        for number in range(1, count + 1):
            line = encode({"seq": number, **record(number), "prev": prev})
            out.write(line)
            prev, size = line_hash(line), size + len(line)
    path.with_name(path.name + ".head").write_bytes(Head(count, prev, size).to_bytes())


# ---------------------------------------------------------------------- (a) appending

BEFORE = "1946202"   # the commit before issue 26's audit changes: every append fsynced


def old_audit_log() -> type | None:
    """The AuditLog class as it was at BEFORE (from git), or None without git."""
    repo = Path(__file__).resolve().parent.parent
    done = subprocess.run(["git", "-C", str(repo), "show", f"{BEFORE}:dm_cc/session/audit.py"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    namespace: dict = {"__name__": "audit_before"}
    exec(compile(done.stdout, f"{BEFORE}:dm_cc/session/audit.py", "exec"), namespace)
    return namespace["AuditLog"]


def per_call_fsync(log, calls: int) -> float:
    """The log as it was: each append fsyncs its record and replaces the head."""
    start = time.perf_counter()
    for number in range(calls):
        log.append(record(number))
    return (time.perf_counter() - start) / calls


def grouped(log: AuditLog, calls: int, reply: int) -> float:
    """As the loop does now for replies of ``reply`` calls run at once: each call's
    record written, one sync before they act, the head brought up at the reply's end."""
    start = time.perf_counter()
    for number in range(calls):
        log.append(record(number))
        if number % reply == reply - 1:
            log.sync(head=False)   # before the reply's calls act
            log.sync()             # the reply's end: the head
    log.sync()
    return (time.perf_counter() - start) / calls


def plain_fsync(path: Path, calls: int) -> float:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        start = time.perf_counter()
        for number in range(calls):
            os.write(fd, encode(record(number)))
            os.fsync(fd)
        return (time.perf_counter() - start) / calls
    finally:
        os.close(fd)


def bench_append(where: Path, calls: int, rounds: int) -> None:
    before = old_audit_log()
    reference = "plain write+fsync per call (reference)"
    old = f"as before ({BEFORE}): fsync + head per call"
    samples: dict[str, list[float]] = {reference: [], old: [], "now, replies of 1 call": [],
                                       "now, replies of 5 calls": []}
    if before is None:
        del samples[old]
        print(f"    (no git: the log as it was at {BEFORE} is not measured)")
    for turn in range(rounds):
        base = where / f"append-{turn}"
        samples[reference].append(plain_fsync(base.with_suffix(".plain"), calls))
        if before is not None:
            samples[old].append(per_call_fsync(before(base / "old.jsonl"), calls))
        samples["now, replies of 1 call"].append(grouped(AuditLog(base / "one.jsonl"), calls, 1))
        samples["now, replies of 5 calls"].append(grouped(AuditLog(base / "five.jsonl"), calls, 5))
    print(f"(a) appending, per call ({calls} calls x {rounds} interleaved rounds, medians):")
    floor = statistics.median(samples[reference])
    for name, values in samples.items():
        value = statistics.median(values)
        print(f"    {name:45} {value * 1000:7.3f} ms   {value / floor:5.2f}x the reference")
    for name in ("one", "five"):
        assert AuditLog(where / "append-0" / f"{name}.jsonl").verify().broken is None


# ---------------------------------------------------------------------- (b) verify

def hash_lines(path: Path) -> int:
    count = 0
    with open(path, "rb") as log:
        for line in log:
            hashlib.sha256(line).hexdigest()
            count += 1
    return count


def hash_and_parse(path: Path) -> int:
    count = 0
    with open(path, "rb") as log:
        for line in log:
            hashlib.sha256(line).hexdigest()
            json.loads(line)
            count += 1
    return count


def bench_verify(path: Path, records: int, rounds: int) -> None:
    ours, plain, parsed = [], [], []
    for _ in range(rounds):
        start = time.perf_counter()
        assert hash_lines(path) == records
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = AuditLog(path).verify()
        ours.append(time.perf_counter() - start)
        assert result.broken is None and result.records == records, result
        start = time.perf_counter()
        assert hash_and_parse(path) == records
        parsed.append(time.perf_counter() - start)
    scale = 100_000 / records
    reference, verify = statistics.median(plain), statistics.median(ours)
    print(f"(b) verify, {records:,} records ({path.stat().st_size / 1e6:.0f} MB), "
          f"medians of {rounds} interleaved rounds, per 100k records:")
    print(f"    read + sha256 each line (reference)  {reference * scale:6.3f} s")
    print(f"    read + sha256 + json.loads each line {statistics.median(parsed) * scale:6.3f} s")
    print(f"    AuditLog.verify                      {verify * scale:6.3f} s   "
          f"{verify / reference:4.2f}x the reference   (target <= 1 s)")


# ---------------------------------------------------------------------- (c) peak RSS

def peak_rss_kb(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    done = subprocess.run([sys.executable, "-c", RSS_PROBE, sys.executable, "-m", "dm_cc", *argv],
                          cwd=cwd, env=env, capture_output=True, text=True, check=True)
    code, rss = done.stdout.split()
    assert code in ("0", "1"), done
    return int(rss)


def bench_rss(where: Path, sizes: list[int]) -> None:
    home = where / "home"
    env = {**os.environ, "DM_CC_HOME": str(home), "HOME": str(home)}
    commands = {"audit": ["audit"], "audit --json": ["audit", "--json"],
                "audit --json --full": ["audit", "--json", "--full"],
                "audit verify": ["audit", "verify"]}
    rows: dict[str, list[int]] = {name: [] for name in commands}
    for size in sizes:
        project = where / f"project-{size}"
        (project / ".git").mkdir(parents=True)
        log = AuditLog.for_project(home / "data", project)
        write_log(log.path, size)
        for name, argv in commands.items():
            rows[name].append(peak_rss_kb(argv, project, env))
    heading = "   ".join(f"{size:>9,} records" for size in sizes)
    print(f"(c) peak RSS of the command as a process   {heading}")
    for name, values in rows.items():
        cells = "   ".join(f"{value / 1024:12.1f} MB    " for value in values)
        print(f"    dm_cc {name:34} {cells}  x{values[-1] / values[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000, help="the large log's records")
    parser.add_argument("--calls", type=int, default=100, help="appends per round in (a)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-audit-", dir=os.environ.get("TMPDIR")) as tmp:
        where = Path(tmp)
        bench_append(where, args.calls, args.rounds)
        path = where / "verify" / "log.jsonl"
        write_log(path, args.records)
        bench_verify(path, args.records, max(3, args.rounds // 2 + 1))
        bench_rss(where, [args.records // 10, args.records])


if __name__ == "__main__":
    main()
