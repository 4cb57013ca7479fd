"""``dm_cc audit [--json [--full]] [--session ID] [--since WHEN] [--decision D]`` and
``dm_cc audit verify [FILE ...]`` — the project's log of permission decisions.

Listing reads the project's log and the logs set aside from it (oldest first), one
line at a time, so memory does not grow with the log;
``verify`` checks the hash chain and the head of the project's log (or of each FILE)
and exits 1 naming the first broken line as ``file:line``. None of this imports
litellm, mcp or prompt_toolkit (docs/audit.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dm_cc.errors import UsageError

if TYPE_CHECKING:
    from dm_cc.session import AuditLog, Verification

_DURATION = re.compile(r"(?:\d{1,9}[smhdw])+")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
RECOVER_TORN = ("To recover: nothing to do by hand. The next decision dm_cc records moves "
                "this log (and its head) aside unchanged, as <name>.set-aside-<time>.jsonl, and "
                "starts a new log; keep the set-aside file as the record of what happened.")


def _log() -> AuditLog:
    from dm_cc.compose import open_world

    return open_world().audit


def since(text: str, now: float | None = None) -> float:
    """Epoch seconds from ``2h``/``1d``/``30m``/``1w`` ago, or an ISO date or time
    (``2026-11-23``, ``2026-11-23T08:00``; local time unless it names a zone)."""
    spelled = text.strip().lower()
    if _DURATION.fullmatch(spelled):
        seconds = sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)([smhdw])", spelled))
        return (time.time() if now is None else now) - seconds
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--since {text!r}: give a duration (30m, 2h, 1d, 1w) or an ISO date "
                         "or time (2026-11-23, 2026-11-23T08:00, 2026-11-23T08:00Z)") from None
    if when.tzinfo is None:
        when = when.astimezone()  # the person's local time
    return when.timestamp()


def _seconds(record: dict[str, Any]) -> float | None:
    try:
        return datetime.fromisoformat(str(record.get("time"))).timestamp()
    except ValueError:
        return None


def _records(log: AuditLog, full: bool = False) -> Iterator[dict[str, Any]]:
    """Every decision of the project's set-aside logs and its log, oldest first, read
    one line at a time; a line that is not a record is reported on stderr. A call's
    full request list (a line of its own) is not a decision: with ``full`` it takes
    the place of the summary in its record's ``requests``."""
    from dm_cc.session import AuditLog

    for path in [*log.set_aside(), log.path]:
        for number, record in AuditLog.at(path).records(full=full):
            if record is None:
                print(f"dm_cc: warning: {path}:{number}: not an audit record "
                      "(`dm_cc audit verify` checks the log)", file=sys.stderr)
            elif "kind" not in record:
                yield record


def _wanted(record: dict[str, Any], args: argparse.Namespace, cutoff: float | None) -> bool:
    if args.session and args.session not in (record.get("session"), record.get("root_session")):
        return False
    if args.decision and record.get("decision") != args.decision:
        return False
    if cutoff is not None:
        seconds = _seconds(record)
        return seconds is not None and seconds >= cutoff
    return True


def _local(record: dict[str, Any]) -> str:
    seconds = _seconds(record)
    if seconds is None:
        return str(record.get("time"))
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _shown(text: object) -> str:
    text = str(text)
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)


def human(record: dict[str, Any]) -> str:
    """One record as a line: when, where, what, the outcome, who decided and why."""
    who = str(record.get("agent", "?"))
    if record.get("subagent"):
        who += f" [{record['subagent']}]"
    line = (f"{_local(record)}  {record.get('session', '?')}  {who}  "
            f"{str(record.get('decision', '?')).upper():5}  {record.get('tool', '?')} "
            f"{_shown(record.get('input', ''))}  by {record.get('decided_by', '?')}")
    requests = record.get("requests")
    deciding = [r for r in requests if isinstance(r, dict) and r.get("decision")
                == record.get("gate")] if isinstance(requests, list) else []
    if deciding:
        first = deciding[0]
        rule = first.get("rule") or {}
        counts = record.get("requests_by_verdict")
        more = (counts.get(record.get("gate"), 0) if isinstance(counts, dict)
                else len(deciding)) - 1   # a summarised record lists some of them
        line += (f"  ({first.get('permission')} {_shown(first.get('pattern'))}: "
                 f"{rule.get('action')} {rule.get('permission')} {_shown(rule.get('pattern'))}"
                 f" at {first.get('source')}"
                 + (f", {more} more" if isinstance(more, int) and more > 0 else "") + ")")
    total = record.get("requests_total")
    if isinstance(total, int):
        line += f"  [{total} requests]"
    return line


def _list(args: argparse.Namespace) -> int:
    log = _log()
    cutoff = since(args.since) if args.since else None
    shown = 0
    for record in _records(log, full=args.full):
        if _wanted(record, args, cutoff):
            shown += 1
            print(json.dumps(record, ensure_ascii=False) if args.json else human(record))
    if not shown and not args.json:
        print(f"no audit records match ({log.path})", file=sys.stderr)
    return 0


def _report(result: Verification) -> bool:
    if result.broken is None:
        print(f"ok: {result.path}: {result.records} record{'' if result.records == 1 else 's'}, "
              "the chain and its head verify")
        for note in result.notes:
            print(f"  note: {note}")
        return True
    print(f"{result.where}: broken: {result.broken.message}")
    line = result.broken.line
    if line is not None and line > 1:
        print(f"  records 1 to {min(line - 1, result.records)} verify")
    if result.broken.message.startswith("torn record") and ".set-aside-" not in result.path.name:
        print(f"  {RECOVER_TORN}")
    return False


def _verify(args: argparse.Namespace) -> int:
    from dm_cc.session import AuditLog

    if args.files:
        logs = [AuditLog.at(Path(name)) for name in args.files]
        for log in logs:
            if not log.path.exists() and not log.head_path.exists():
                raise UsageError(f"no audit log {log.path}")
    else:
        logs = [_log()]
    good = all([_report(log.verify()) for log in logs])
    if not args.files:
        for aside in logs[0].set_aside():
            print(f"  note: an earlier log of this project was set aside: {aside} "
                  f"(`dm_cc audit verify {aside}` checks it)")
    return 0 if good else 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser],
             rest: Sequence[str] = ()) -> None:
    audit = commands.add_parser(
        "audit", help="the log of permission decisions; `audit verify` checks it",
        description="Every permission decision of this project, oldest first: when, which "
                    "session and agent, the tool and its input, the outcome, who decided "
                    "(rule, saved_approval, session_approval, person_*, hook, "
                    "headless_default) and the deciding rule with its source.")
    audit.add_argument("--json", action="store_true",
                       help="one JSON record per line (the fields as stored)")
    audit.add_argument("--full", action="store_true",
                       help="with --json: every request of a call with many, not the summary")
    audit.add_argument("--session", metavar="ID",
                       help="only this session's decisions (and its subagents')")
    audit.add_argument("--since", metavar="WHEN",
                       help="only decisions since WHEN: 30m, 2h, 1d, 1w ago, or an ISO date/time")
    audit.add_argument("--decision", choices=("allow", "deny"),
                       help="only calls that ran (allow) or did not (deny)")
    audit.set_defaults(handler=_list)
    sub = audit.add_subparsers(dest="audit_command", metavar="SUBCOMMAND")
    verify = sub.add_parser(
        "verify", help="check the hash chain; exit 1 naming the first broken line",
        description="Check that no record was changed, removed or moved: each record's "
                    "prev is the hash of the line before it, and the log ends where its "
                    "head file says. Exit 1 naming the first broken line (file:line).")
    verify.add_argument("files", nargs="*", metavar="FILE",
                        help="logs to check (default: this project's)")
    verify.set_defaults(handler=_verify)
